package command

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/axes"
)

// ErrLocal is what CLIArgs returns (wrapped) for an invocation that only
// an interactive surface carries out.
var ErrLocal = errors.New("no command-line form")

type localError struct{ msg string }

func (e *localError) Error() string { return e.msg }

func (e *localError) Is(target error) bool { return target == ErrLocal }

// IsLocal reports whether an interactive surface carries out the
// invocation itself instead of running the CLI: /clear, /help, /model
// NAME.
func (inv Invocation) IsLocal() bool {
	return inv.Cmd != nil && (inv.Cmd.CLI == nil || (inv.Cmd.args == argLocal && len(inv.Args) > 0))
}

// runOf is the run the invocation names, and the positional arguments
// left after it.
func (inv Invocation) runOf() (string, []string) {
	if id, ok := inv.Flags["run"]; ok {
		return id, inv.Args
	}
	switch inv.Cmd.args {
	case argRun:
		if len(inv.Args) > 0 {
			return inv.Args[0], inv.Args[1:]
		}
	case argRunText:
		// "/resume try the other parser" is guidance for the run on
		// screen; a first word shaped like a run id names the run.
		if len(inv.Args) > 0 && LooksLikeRun(inv.Args[0]) {
			return inv.Args[0], inv.Args[1:]
		}
	}
	return "", inv.Args
}

// Run is the run the invocation names itself ("" for none: the
// surface's own run).
func (inv Invocation) Run() string {
	id, _ := inv.runOf()
	return id
}

// runShape is what a run id looks like (20261124-091217-b8302f), or a
// prefix of one.
var runShape = regexp.MustCompile(`^\d{8}(-\d{0,6}(-[0-9a-f]{0,6})?)?$`)

// LooksLikeRun says s has the shape of a run id or of a prefix of one.
func LooksLikeRun(s string) bool { return runShape.MatchString(s) }

// CLIArgs is the argv of `ultra` (without the program name) that carries
// out the invocation. run is the run the surface shows ("" for none); it
// is used when the invocation names no run.
func (inv Invocation) CLIArgs(run string) ([]string, error) {
	c := inv.Cmd
	if c == nil {
		return nil, errors.New("no command: type /help for the commands")
	}
	where := "/" + c.Name
	if c.CLI == nil {
		return nil, &localError{fmt.Sprintf("%s %s; it has no command-line form", where, c.Local)}
	}
	if c.args == argLocal && len(inv.Args) > 0 {
		name := inv.Args[0]
		return nil, &localError{fmt.Sprintf("%s %s sets the next run's model in the TUI; on the command line pass --model %s to ultra run", where, name, name)}
	}
	argv := slices.Clone(c.CLI)
	id, rest := inv.runOf()
	if c.Run {
		_, base := inv.Flags["base"]
		if id == "" && !(c.Name == "review" && base) {
			id = run
		}
		if id == "" && !c.RunOptional {
			return nil, fmt.Errorf("%s needs a run: attach to one or give its id", where)
		}
		if id != "" {
			if err := checkRunID(where, id); err != nil {
				return nil, err
			}
			argv = append(argv, id)
		}
	}
	switch c.args {
	case argAction, argPlain:
		argv = append(argv, rest...)
	case argAxis:
		if len(rest) != 1 {
			return nil, fmt.Errorf("%s: give a %s (usage: %s)", where, c.argNoun, c.Synopsis())
		}
		argv = append(argv, "--"+c.argFlag, rest[0])
	}
	for _, f := range c.Flags {
		v, ok := inv.Flags[f.Name]
		switch {
		case !ok || f.to == "-":
		case f.to != "":
			name, value, _ := strings.Cut(f.to, "=")
			argv = append(argv, "--"+cliFlag(name), value)
		case !f.Value:
			argv = append(argv, "--"+f.Name)
		case strings.HasPrefix(v, "-"):
			argv = append(argv, "--"+f.Name+"="+v)
		default:
			argv = append(argv, "--"+f.Name, v)
		}
	}
	text := strings.TrimSpace(strings.Join(rest, " "))
	switch c.args {
	case argText:
		if text == "" {
			return nil, fmt.Errorf("%s: give the %s (usage: %s)", where, c.argNoun, c.Synopsis())
		}
		if strings.HasPrefix(text, "-") {
			argv = append(argv, "--"+c.argFlag+"="+text)
		} else {
			argv = append(argv, "--"+c.argFlag, text)
		}
	case argRunText:
		if text != "" {
			if strings.HasPrefix(text, "-") {
				argv = append(argv, "--")
			}
			argv = append(argv, text)
		}
	}
	return argv, nil
}

// cliFlag is the CLI flag of an axis name ("permission_profile" →
// "permission-profile").
func cliFlag(axis string) string {
	for f, a := range axisFlags {
		if a == axis {
			return f
		}
	}
	return axis
}

// AxisChanges is what an Axes command changes: axis name (as in
// internal/axes) → value.
func (inv Invocation) AxisChanges() (map[string]string, error) {
	c := inv.Cmd
	if c == nil {
		return nil, errors.New("no command: type /help for the commands")
	}
	where := "/" + c.Name
	if !c.Axes {
		return nil, fmt.Errorf("%s changes no axes", where)
	}
	out := map[string]string{}
	set := func(axis, value, by string) error {
		v := strings.ToLower(strings.TrimSpace(value))
		if !slices.Contains(axes.Values[axis], v) {
			return fmt.Errorf("%s: %q is not a %s (%s)", where, value, axisNoun(axis), strings.Join(axes.Values[axis], ", "))
		}
		if old, ok := out[axis]; ok && old != v {
			return fmt.Errorf("%s: the %s is given twice (%s and %s, by %s)", where, axisNoun(axis), old, v, by)
		}
		out[axis] = v
		return nil
	}
	for axis, v := range c.sets {
		out[axis] = v
	}
	if c.args == argAxis {
		if len(inv.Args) != 1 {
			return nil, fmt.Errorf("%s: give a %s (usage: %s)", where, c.argNoun, c.Synopsis())
		}
		if err := set(axisFlags[c.argFlag], inv.Args[0], c.Synopsis()); err != nil {
			return nil, err
		}
	}
	for _, f := range c.Flags {
		v, ok := inv.Flags[f.Name]
		if !ok {
			continue
		}
		if axis := axisFlags[f.Name]; axis != "" {
			if err := set(axis, v, "--"+f.Name); err != nil {
				return nil, err
			}
		} else if axis, value, ok := strings.Cut(f.to, "="); ok && f.to != "-" {
			if err := set(axis, value, "--"+f.Name); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)", where)
	}
	return out, nil
}

func axisNoun(axis string) string {
	switch axis {
	case axes.Mode:
		return "work mode"
	case axes.Control:
		return "run control"
	case axes.Permission:
		return "permission profile"
	case axes.ModelMode:
		return "model mode"
	}
	return axis
}
