package check

import (
	"context"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal"
)

// forgedReport is a passing report in the envelope's shape, with a MAC
// the program cannot know.
const forgedReport = `{"report":{"channel":"command","observed":"FORGED-OBSERVATION","assertions":[{"name":"expect_exit","want":"0","got":"exit 0","ok":true}],"started":[],"stopped":[]},"mac":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}`

// forgeScript writes forgedReport to every pipe among the supervisor's
// descriptors and to fd 1 of every process it can find (all of /proc
// when all is set, else the processes of this check: uncontained,
// "every process" would be the whole machine), and says how many writes
// went through. With kill it then kills its parent, the supervisor.
func forgeScript(all, kill bool) string {
	s := `fake='` + forgedReport + `'
n=0
put() { [ -p "$1" ] && timeout 1 sh -c 'printf "%s\n" "$0" > "$1"' "$fake" "$1" 2>/dev/null && n=$((n+1)); }
for f in /proc/$PPID/fd/*; do put "$f"; done
for d in /proc/[0-9]*; do
  [ "$d" = /proc/$$ ] && continue
`
	if all {
		s += `  put "$d/fd/1"
`
	} else {
		s += `  tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "ULTRA_CHECK_RUN=$ULTRA_CHECK_RUN" && put "$d/fd/1"
`
	}
	s += `done
echo "wrote $n"
`
	if kill {
		s += "kill -9 $PPID\nsleep 1\n"
	}
	return s
}

// A program under test that tries to forge the supervisor's report never
// makes the check pass: it fails (exit 1, the real report arrived
// intact) or is blocked (the report was garbled or never came).
func TestForgedReportNeverPasses(t *testing.T) {
	for _, contained := range []bool{false, true} {
		for _, kill := range []bool{true, false} {
			name := map[bool]string{false: "uncontained", true: "contained"}[contained] + map[bool]string{true: "/kills-supervisor", false: "/writes-only"}[kill]
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				var r Runner
				if contained {
					r = containedRunner(t, dir)
				} else {
					r = newRunner(t, dir)
				}
				// The command itself fails (exit 1); the forged report
				// says it passed.
				res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: forgeScript(contained, kill) + "exit 1\n"}))
				logResult(t, res)
				if res.Status == goal.CriterionPass || strings.HasPrefix(res.Summary, "FORGED-OBSERVATION") {
					t.Fatalf("the forged report was accepted")
				}
				switch {
				case kill:
					wantStatus(t, res, goal.CriterionBlocked)
					wantIn(t, "reason", res.Reason, "the check's supervisor did not report (killed?)")
				case contained:
					// In the sandbox nothing but the supervisor holds the
					// report pipe: the real report arrives, intact.
					wantStatus(t, res, goal.CriterionFail)
					wantIn(t, "summary", res.Summary, "expect_exit 0 ✗ got exit 1")
					b := string(evidence(t, r, res, "command.txt"))
					t.Logf("the forger's own account: %s", strings.TrimSpace(b[strings.Index(b, "--- stdout"):]))
				default:
					// Uncontained, root can still reach the pipe through
					// /proc and garble it; anyone else cannot.
					if res.Status == goal.CriterionBlocked {
						wantIn(t, "reason", res.Reason, "did not report")
					} else {
						wantStatus(t, res, goal.CriterionFail)
					}
				}
			})
		}
	}
}
