package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// Approvals: allow once, the tool for the run, every read-only call for
// the run, and a denial whose reason the model reads; each is the command
// line's approve.
func TestApprovalKeys(t *testing.T) {
	id := "20261124-120000-abcdef"
	for _, c := range []struct {
		keys []string
		want []string
	}{
		{[]string{"a"}, []string{"approve", "--output", "jsonl", id, "--call", "c9"}},
		{[]string{"r"}, []string{"approve", "--output", "jsonl", id, "--call", "c9", "--for-run"}},
		// The call waiting is a write: "read-only calls" does not allow it.
		{[]string{"o"}, nil},
		{[]string{"d", "-rf is not that file", "enter"}, []string{"approve", "--output", "jsonl", id, "--call", "c9", "--deny=-rf is not that file"}},
	} {
		m, f := newDemo(t, 120, 40, "manual")
		pump(t, m, press(m, c.keys...))
		if got := f.lastExec(); !slices.Equal(got, c.want) {
			t.Errorf("%v ran %v, want %v", c.keys, got, c.want)
		}
	}
}

// The read-only answer is offered, and taken, only on a call that reads.
func TestReadOnlyAnswerOnlyOnReads(t *testing.T) {
	id := "20261124-120000-bbbbbb"
	f := newFake()
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Task: "t", Phase: "building", Status: "running", Axes: a})
	f.add(id, event.RunStarted, "building", event.RunStartedData{Task: "t", Axes: a})
	f.add(id, event.Approval, "building", event.ApprovalData{CallID: "c3", Tool: "read", Args: json.RawMessage(`{"file_path":"calc.go"}`), State: "waiting", ReadOnly: true})
	m := attached(t, f, id)
	if s := screen(m); !strings.Contains(s, "o allow read-only calls (read, glob, grep) for this run") {
		t.Errorf("the read-only answer is not offered on a read:\n%s", s)
	}
	pump(t, m, press(m, "o"))
	if got, want := f.lastExec(), []string{"approve", "--output", "jsonl", id, "--call", "c3", "--read-only"}; !slices.Equal(got, want) {
		t.Errorf("o ran %v, want %v", got, want)
	}
	w, _ := newDemo(t, 120, 40, "manual") // a write waits there
	if s := screen(w); strings.Contains(s, "allow read-only calls") {
		t.Errorf("the read-only answer is offered on a write:\n%s", s)
	}
}

func TestPlanAcceptance(t *testing.T) {
	id := "20261124-130000-aaaaaa"
	setup := func() (*Model, *fake) {
		f := newFake()
		a := axes.Axes{Mode: "plan", Control: "assisted", Permission: "normal", ModelMode: "smart"}
		f.setRow(&store.Run{ID: id, Task: "t", Phase: "planning", Status: "needs_approval", Axes: a})
		f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "t", Axes: a})
		f.add(id, event.PlanProposed, "planning", event.PlanProposedData{Plan: "1. fix Add\n2. test it"})
		return attached(t, f, id), f
	}
	m, _ := setup()
	s := screen(m)
	for _, want := range []string{"the plan waits for you", "1. fix Add", "a accept", "A accept and run autonomously", "e edit", "x reject", "answer the prompt above"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
	for _, c := range []struct {
		keys []string
		want []string
	}{
		{[]string{"a"}, []string{"approve", "--output", "jsonl", id}},
		{[]string{"A"}, []string{"approve", "--output", "jsonl", id, "--autonomous"}},
		{[]string{"e", "--split it in two goals", "enter"}, []string{"resume", "--output", "jsonl", id, "--", "--split it in two goals"}},
		{[]string{"x", "x"}, []string{"cancel", id, "--reason", "plan rejected from the TUI"}},
		// Typed text never answers the prompt: "rename" would be r, e, …
		{[]string{"rename the goal"}, nil},
		// A second key other than x drops the rejection.
		{[]string{"x", "a"}, []string{"approve", "--output", "jsonl", id}},
	} {
		m, f := setup()
		for _, k := range c.keys {
			pump(t, m, press(m, k))
		}
		if got := f.lastExec(); !slices.Equal(got, c.want) {
			t.Errorf("%v ran %v, want %v", c.keys, got, c.want)
		}
	}
}

func TestEscPausesAndCtrlCTwiceQuits(t *testing.T) {
	m, f := newDemo(t, 120, 40, "autonomous")
	pump(t, m, press(m, "esc"))
	if got := f.lastExec(); len(got) < 2 || got[0] != "pause" || got[1] != "20261124-120000-abcdef" {
		t.Errorf("esc ran %v", got)
	}
	if cmd := press(m, "ctrl+c"); isQuit(cmd) {
		t.Fatal("one ctrl+c quit")
	}
	if !strings.Contains(screen(m), "press Ctrl-C again to quit") {
		t.Error("no warning after the first ctrl+c")
	}
	if cmd := press(m, "ctrl+c"); !isQuit(cmd) {
		t.Fatal("the second ctrl+c did not quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			if isQuit(c) {
				return true
			}
		}
		return false
	}
	_, ok := msg.(tea.QuitMsg)
	return ok
}

// An approval prompt shows the argument a call is judged by first and
// whole, however the model ordered and padded its arguments.
func TestApprovalShowsTheCommandWhole(t *testing.T) {
	f := newFake()
	id := "20261124-190000-aaaaaa"
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Status: "running", Axes: a})
	pad := strings.Repeat("nothing is modified by this command. ", 20)
	f.add(id, event.Approval, "building", event.ApprovalData{CallID: "c1", Tool: "bash", State: "waiting",
		Args: json.RawMessage(`{"description":"` + pad + `","command":"go test ./calc/ | sed -e 's/^/  /' ; touch PWN9"}`)})
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, m.pollCmd())
	s := screen(m)
	if !strings.Contains(s, "command: go test ./calc/ | sed -e 's/^/  /' ; touch PWN9") {
		t.Fatalf("the command is not whole on screen:\n%s", s)
	}
}

// A call that waits keeps its prompt: Esc puts it away, Esc again (or
// typing) brings it back, and the run is not paused under it.
func TestWaitingCallPromptComesBack(t *testing.T) {
	m, f := newDemo(t, 120, 40, "manual")
	pump(t, m, press(m, "esc"))
	if m.modal() || strings.Contains(screen(m), "approve this call?") {
		t.Fatal("esc did not put the prompt away")
	}
	pump(t, m, press(m, "esc"))
	if !m.modal() || len(f.execs) != 0 {
		t.Fatalf("the second esc: modal %v, ran %v", m.modal(), f.execs)
	}
	pump(t, m, press(m, "esc"))
	pump(t, m, press(m, "go on please", "enter"))
	if !m.modal() || len(f.execs) != 0 || !strings.Contains(screen(m), "waits for your decision on call c9") {
		t.Fatalf("typing to a waiting run: modal %v, ran %v\n%s", m.modal(), f.execs, screen(m))
	}
}

// A slash command can be typed while a prompt waits: "/" steps the prompt
// aside, and none of the command's letters answers it.
func TestSlashCommandUnderAPrompt(t *testing.T) {
	m, f := newDemo(t, 120, 40, "manual")
	pump(t, m, press(m, "/permission-profile trusted", "enter"))
	got := f.lastExec()
	if len(got) < 2 || got[0] != "steer" || !slices.Contains(got, "trusted") {
		t.Fatalf("ran %v (all: %v)", got, f.execs)
	}
	for _, e := range f.execs {
		if e[0] == "approve" {
			t.Fatalf("the command's letters answered the prompt: %v", f.execs)
		}
	}
	if !m.modal() {
		t.Error("the prompt did not come back after the command")
	}
}

// A command too long for the screen cannot be allowed until it shows
// whole: its first lines stay on screen and a / r are refused.
func TestApprovalOfACallThatDoesNotFit(t *testing.T) {
	f := newFake()
	id := "20261124-220000-aaaaaa"
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Status: "running", Axes: a})
	cmd := "rm -rf ~/FIRSTLINE" + strings.Repeat("\\necho harmless", 30)
	f.add(id, event.Approval, "building", event.ApprovalData{CallID: "c1", Tool: "bash", State: "waiting",
		Args: json.RawMessage(`{"command":"` + cmd + `"}`)})
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	pump(t, m, m.pollCmd())
	s := screen(m)
	if !strings.Contains(s, "approve this call? bash") || !strings.Contains(s, "rm -rf ~/FIRSTLINE") {
		t.Fatalf("the head of the call is not on screen:\n%s", s)
	}
	pump(t, m, press(m, "a"))
	pump(t, m, press(m, "r"))
	if len(f.execs) != 0 || !strings.Contains(screen(m), "does not show whole") {
		t.Fatalf("a call cut on screen was allowed: %v\n%s", f.execs, screen(m))
	}
	pump(t, m, press(m, "d", "too long", "enter"))
	if got := f.lastExec(); len(got) < 2 || got[len(got)-2] != "--deny" || got[len(got)-1] != "too long" {
		t.Fatalf("d ran %v", got)
	}
	// A terminal that shows it whole lets it be allowed.
	m2 := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m2.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	pump(t, m2, m2.pollCmd())
	pump(t, m2, press(m2, "a"))
	if got := f.lastExec(); got[0] != "approve" || slices.Contains(got, "--deny") {
		t.Fatalf("a on a whole call ran %v", got)
	}
}

// A --no-wait run that ended waiting for a call still shows its prompt:
// allowing it continues the run.
func TestNoWaitRunKeepsItsPrompt(t *testing.T) {
	f := newFake()
	id := "20261124-230000-aaaaaa"
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Status: "needs_approval", Axes: a})
	f.add(id, event.Approval, "building", event.ApprovalData{CallID: "c1", Tool: "read", State: "waiting", Args: json.RawMessage(`{"file_path":"a.go"}`)})
	f.add(id, event.RunFinished, "building", event.RunFinishedData{Status: "needs_approval", Reason: "call c1 waits"})
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, m.pollCmd())
	pump(t, m, press(m, "a"))
	if got := f.lastExec(); !slices.Equal(got, []string{"approve", "--output", "jsonl", id, "--call", "c1"}) {
		t.Fatalf("a ran %v\n%s", got, screen(m))
	}
}

// A run steps up to unrestricted only on a second press.
func TestUnrestrictedTakesASecondPress(t *testing.T) {
	m, f := newDemo(t, 120, 40, "autonomous") // trusted: the next is unrestricted
	pump(t, m, press(m, "alt+p"))
	if len(f.execs) != 0 || !strings.Contains(screen(m), "press alt+p again to make the run unrestricted") {
		t.Fatalf("one press ran %v:\n%s", f.execs, screen(m))
	}
	pump(t, m, press(m, "alt+p"))
	if got := f.lastExec(); len(got) == 0 || got[0] != "steer" || !slices.Contains(got, "unrestricted") {
		t.Fatalf("two presses ran %v", got)
	}
}

// A prompt that appears as the person types does not take their keys:
// not while the input holds text, and not in its first moments.
func TestPromptGrace(t *testing.T) {
	now := t0
	f := newFake()
	id := "20261124-235000-aaaaaa"
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Status: "running", Axes: a})
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, m.pollCmd())
	typeKey := func(r rune) {
		modal := m.modal() // typing into the input only makes its cursor blink
		if _, c := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)}); modal {
			pump(t, m, c)
		}
	}
	typeKey('/')
	typeKey('s')
	// The call arrives mid-typing.
	f.add(id, event.Approval, "building", event.ApprovalData{CallID: "c1", Tool: "bash", State: "waiting", Args: json.RawMessage(`{"command":"touch x"}`)})
	pump(t, m, m.pollCmd())
	for _, r := range "teer --reason prefer" {
		typeKey(r)
	}
	if len(f.execs) != 0 || m.input.Value() != "/steer --reason prefer" {
		t.Fatalf("typing answered the prompt: %v, input %q", f.execs, m.input.Value())
	}
	m.input.Reset()
	// With the input empty, the prompt takes its keys, but not at once.
	typeKey('a')
	if len(f.execs) != 0 || !strings.Contains(screen(m), "has just appeared") {
		t.Fatalf("a key in the prompt's first moment ran %v", f.execs)
	}
	now = now.Add(askGrace)
	typeKey('a')
	if got := f.lastExec(); len(got) == 0 || got[0] != "approve" {
		t.Fatalf("a after the grace ran %v", got)
	}
}

// The plan prompt shows even when the row was read just before the run
// stopped at its plan: the plan event came with a row that still said
// running, and the next poll brings the row and no new event.
func TestPlanPromptAfterAStaleRow(t *testing.T) {
	id := "20261124-130000-bbbbbb"
	f := newFake()
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Task: "t", Phase: "planning", Status: "running", Axes: a})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "t", Axes: a})
	f.add(id, event.PlanProposed, "planning", event.PlanProposedData{Plan: "1. fix Add"})
	m := attached(t, f, id)
	f.setRow(&store.Run{ID: id, Task: "t", Phase: "planning", Status: "needs_approval", Axes: a})
	pump(t, m, m.pollCmd())
	if s := screen(m); !strings.Contains(s, "the plan waits for you") {
		t.Fatalf("no plan prompt:\n%s", s)
	}
}

// A goals call waits as the plan it proposes, goals and criteria with what
// ultra will run, never as JSON; a accepts it.
func TestGoalsCallShownAsPlan(t *testing.T) {
	f := newFake()
	id := "20261124-220000-bbbbbb"
	a := axes.Axes{Mode: "build", Control: "manual", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Status: "running", Axes: a})
	args := `{"goals":[{"title":"Add adds","objective":"Add returns the sum","criteria":[{"scenario":"2+3 is 5","user_model":"happy","channel":"command","check":{"run":"go test ./calc","expect_exit":0},"expected_evidence":"ok"}]}]}`
	f.add(id, event.Approval, "planning", event.ApprovalData{CallID: "c1", Tool: "goals", State: "waiting", Args: json.RawMessage(args)})
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, m.pollCmd())
	s := screen(m)
	for _, want := range []string{"accept this plan?", "G001-add-adds: Add adds", "[happy, cli, command] 2+3 is 5", "runs `go test ./calc`"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the prompt lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, `"criteria"`) {
		t.Fatalf("the plan shows as JSON:\n%s", s)
	}
	pump(t, m, press(m, "a"))
	if got := f.lastExec(); len(got) == 0 || !strings.Contains(strings.Join(got, " "), "approve") {
		t.Fatalf("a ran %v", got)
	}
}
