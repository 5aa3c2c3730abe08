package check

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// command runs check.run with the shell and waits for it; the assertions
// read its exit code and its stdout and stderr once it has stopped.
func (s *sup) command(ctx context.Context) {
	c := s.in.Check
	p, err := s.start("command", c.Run)
	if err != nil {
		s.block("the command did not start", err.Error())
		return
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		s.timedOut("waiting for the command to finish", "")
	}
	s.stop(p)
	s.render = append(s.render, func() {
		stdout, stderr := p.stdout.String(), p.stderr.String()
		status := p.status()
		if status == "" {
			status = "did not end"
		}
		s.rep.Observed = fmt.Sprintf("command %s → %s", excerpt(c.Run, 60), status)
		if status != "exit 0" {
			// Why it failed, as it said last (the whole output is in
			// the evidence).
			if why := lastLine(stderr); why != "" {
				s.rep.Observed += ": " + excerpt(why, 120)
			} else if why := lastLine(stdout); why != "" {
				s.rep.Observed += ": " + excerpt(why, 120)
			}
		}
		if s.rep.Blocked == "" {
			want := 0
			if c.ExpectExit != nil {
				want = *c.ExpectExit
			}
			s.rep.Assertions = append(s.rep.Assertions, assertion{
				Name: "expect_exit", Want: strconv.Itoa(want), Got: status, OK: status == "exit "+strconv.Itoa(want),
			})
			if c.ExpectStdout != "" {
				s.rep.Assertions = append(s.rep.Assertions, matches("expect_stdout", c.ExpectStdout, stdout))
			}
			if c.ExpectStderr != "" {
				s.rep.Assertions = append(s.rep.Assertions, matches("expect_stderr", c.ExpectStderr, stderr))
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "$ %s -c %s\n", s.shell, strconv.Quote(c.Run))
		fmt.Fprintf(&b, "%s after %s\n", status, p.ended.Sub(p.began).Round(time.Millisecond))
		fmt.Fprintf(&b, "--- stdout (%d bytes)\n%s", p.stdout.Len(), withNewline(stdout))
		fmt.Fprintf(&b, "--- stderr (%d bytes)\n%s", p.stderr.Len(), withNewline(stderr))
		s.rep.Artifacts = append(s.rep.Artifacts, artifact{Name: "command.txt", Data: []byte(b.String())})
	})
}

// lastLine is s's last line with something on it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// withNewline ends a non-empty s with a newline.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
