package goal

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PlanText is goals as a person reads a plan: each goal's title and
// objective, then its criteria (user model, surface, channel, scenario), each with
// its result on the base tree once it has one and, with checks, what ultra
// will run for it.
func PlanText(goals []Goal, checks bool) string {
	var b strings.Builder
	for _, g := range goals {
		kind := ""
		if g.Refactor {
			kind = " (refactor: no change of behaviour; criteria that run the program pass before and after, criteria that read its text must change)"
		}
		if len(g.DependsOn) > 0 {
			kind += " (after " + strings.Join(g.DependsOn, ", ") + ")"
		}
		fmt.Fprintf(&b, "%s: %s%s\n  %s\n", g.ID, g.Title, kind, g.Objective)
		for _, c := range g.SuccessCriteria {
			ess := ""
			if !c.Essential {
				ess = " (not essential)"
			}
			fmt.Fprintf(&b, "  - %s [%s, %s, %s]%s %s\n", c.ID, c.UserModel, c.SurfaceOf(), c.Channel, ess, c.Scenario)
			if checks {
				if line := CheckLine(c.Channel, c.Check); line != "" {
					fmt.Fprintf(&b, "      %s\n", line)
				}
			}
			if line := BaseLine(c); line != "" {
				fmt.Fprintf(&b, "      %s\n", line)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// CheckLine says in one line what ultra runs for a criterion's check.
func CheckLine(ch Channel, c Check) string {
	var parts []string
	add := func(format string, a ...any) { parts = append(parts, fmt.Sprintf(format, a...)) }
	if c.Start != "" {
		add("starts %s", shown(c.Start))
	}
	switch ch {
	case ChannelCommand:
		if c.Run != "" {
			add("runs %s", shown(c.Run))
		}
		if c.ExpectExit != nil {
			add("expects exit %d", *c.ExpectExit)
		}
		if c.ExpectStdout != "" {
			add("stdout matching %q", c.ExpectStdout)
		}
		if c.ExpectStderr != "" {
			add("stderr matching %q", c.ExpectStderr)
		}
	case ChannelHTTP:
		add("%s :%d%s", firstOf(c.Method, "GET"), c.Port, c.Path)
		if c.ExpectStatus != 0 {
			add("expects %d", c.ExpectStatus)
		}
		if c.ExpectBody != "" {
			add("body matching %q", c.ExpectBody)
		}
	case ChannelTmux, ChannelBrowser, ChannelDesktop:
		if c.URL != "" {
			add("opens %s", c.URL)
		}
		add("%d step(s)", len(c.Steps))
	}
	// Whole: a person accepts what ultra will run, all of it (the
	// proposal's size limits bound it).
	return strings.Join(parts, "; ")
}

// shown is a command as a person reads it before accepting it: in
// backquotes when it is one plain line, else quoted with its newlines
// and control characters written out (a newline separates commands, and
// must not pass for a space).
func shown(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if strings.ContainsAny(cmd, "`") || strings.IndexFunc(cmd, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return strconv.Quote(cmd)
	}
	return "`" + cmd + "`"
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ProposalText is a goals{...} call's arguments as a plan a person reads
// (PlanText with the checks), or an error saying why they do not decode.
func ProposalText(raw []byte) (string, error) {
	p, err := DecodeProposal(raw)
	if err != nil {
		return "", err
	}
	return PlanText(p.ToGoals(time.Time{}), true), nil
}
