package check

import (
	"context"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: apt-get install tmux")
	}
}

// upper reads a line and prints it upper-cased; m marks its processes.
func upper(m string) string {
	return `read -r line; echo "${line^^}"; exec -a ` + m + ` sleep 60`
}

func TestTmuxPass(t *testing.T) {
	needTmux(t)
	m := marker(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelTmux, goal.Check{
		Start: upper(m),
		Steps: []goal.Step{{Keys: "hello Enter", Expect: "HELLO"}},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "summary", res.Summary, `step 1 expect "HELLO" ✓`)
	b := string(evidence(t, r, res, "tmux.txt"))
	wantIn(t, "tmux.txt", b, "=== step 1", `keys: "hello Enter" → send-keys "hello" "Enter"`, "--- capture", "HELLO", `expect "HELLO": matched`)
	wantIn(t, "receipt", res.Receipt, "tmux server pid", "tmux session and server (kill-server; has-session fails)", "leftovers: none")
	noneLeft(t, m)
	noneLeft(t, inTmp(r, "ultra-check-tmux-")) // the private server (its socket's directory is on its command line)
}

// Expectations the terminal's echo alone meets (keys edited on the line:
// "resulx BSpace t" shows "result") fail, whatever the program does: the
// same keys sent to a program that does nothing meet them too.
func TestTmuxEchoOnlyFails(t *testing.T) {
	needTmux(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelTmux, goal.Check{
		Start: "sleep 30",
		Steps: []goal.Step{{Keys: "resulx BSpace t", Expect: "result"}},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, "control (the same keys to a program that does nothing) meets no expect ✗ got every expect is met by the terminal's echo")
	wantIn(t, "tmux.txt", string(evidence(t, r, res, "tmux.txt")), "=== control", "MATCHES (echo only)")
	noneLeft(t, inTmp(r, "ultra-check-tmux-control-"))
}

func TestTmuxWrongExpect(t *testing.T) {
	needTmux(t)
	m := marker(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelTmux, goal.Check{
		Start: upper(m),
		Steps: []goal.Step{{Keys: "hello Enter", Expect: "GOODBYE"}, {Keys: "C-c"}},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `step 1 expect "GOODBYE" ✗ got`, "HELLO")
	if d := res.Duration; d < stepTimeout || d > stepTimeout+5*time.Second {
		t.Errorf("a failing step took %s (its timeout is %s)", d, stepTimeout)
	}
	b := string(evidence(t, r, res, "tmux.txt"))
	wantIn(t, "tmux.txt", b, "=== step 2: not run")
	noneLeft(t, m)
	noneLeft(t, inTmp(r, "ultra-check-tmux-"))
}

// A program that ended stays readable (remain-on-exit); text typed with
// spaces needs quotes.
func TestTmuxEndedProgramAndQuotedKeys(t *testing.T) {
	needTmux(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelTmux, goal.Check{
		Start: `read -r a; read -r b; echo "[$a|$b]"`, Width: 60, Height: 10,
		Steps: []goal.Step{{Keys: `'two words' Enter`}, {Keys: `"it's" Enter`, Expect: `\[two words\|it's\]`}},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "summary", res.Summary, "tmux 60x10")
}

func TestSplitKeys(t *testing.T) {
	for in, want := range map[string][]string{
		"hello Enter":           {"hello", "Enter"},
		"  C-c   ":              {"C-c"},
		"'hello world' Enter":   {"hello world", "Enter"},
		`"say \"hi\"" Enter`:    {`say "hi"`, "Enter"},
		`a\ b Space c`:          {"a b", "Space", "c"},
		`pre'mid dle'post`:      {"premid dlepost"},
		"-v Enter":              {"-v", "Enter"},
		"":                      nil,
		`'' Enter`:              {"", "Enter"},
		"tab\tseparated\tEnter": {"tab", "separated", "Enter"},
	} {
		got, err := splitKeys(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitKeys(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"'open", `"open`, `end\`} {
		if _, err := splitKeys(bad); err == nil {
			t.Errorf("splitKeys(%q) accepted", bad)
		}
	}
	// What send-keys gets: text between key names, joined with spaces.
	for in, want := range map[string][]string{
		"set color blue Enter":  {"set color blue", "Enter"},
		"hello Enter":           {"hello", "Enter"},
		"a b C-c c d Space e":   {"a b", "C-c", "c d", "Space", "e"},
		"Escape :wq Enter":      {"Escape", ":wq", "Enter"},
		"'two  spaces' x Enter": {"two  spaces x", "Enter"},
	} {
		words, _ := splitKeys(in)
		if got := typeWords(words); !reflect.DeepEqual(got, want) {
			t.Errorf("typeWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// The program under test is not told where the tmux server that shows it
// is: it cannot drive its own pane.
func TestTmuxProgramCannotFindItsServer(t *testing.T) {
	needTmux(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelTmux, goal.Check{
		Start: `echo "server:${TMUX:-none} pane:${TMUX_PANE:-none}"; sleep 30`,
		Steps: []goal.Step{{Expect: "server:none pane:none"}},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
}
