package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

func TestBadge(t *testing.T) {
	a := axes.Axes{Mode: "build", Control: "autonomous", Permission: "trusted", ModelMode: "smart"}
	for _, c := range []struct {
		a     axes.Axes
		width int
		want  string
	}{
		{a, 120, "build | autonomous | trusted | smart"},
		{a, 80, "build | autonomous | trusted | smart"},
		{a, 79, "[B][A][T][S]"},
		{axes.Axes{Mode: "chat", Control: "manual", Permission: "restricted", ModelMode: "fast"}, 60, "[C][M][R][F]"},
		// A repair or a review keeps its full label, however narrow.
		{axes.Axes{Mode: "repair", Control: "assisted", Permission: "normal", ModelMode: "deep"}, 60, "[repair][A][N][D]"},
		{axes.Axes{Mode: "review", Control: "manual", Permission: "unrestricted", ModelMode: "deep"}, 40, "[review][M][U][D]"},
	} {
		if got := BadgePlain(c.a, c.width); got != c.want {
			t.Errorf("%v at %d: %q, want %q", c.a, c.width, got, c.want)
		}
		if got := ansi.Strip(Badge(c.a, c.width, false)); got != c.want {
			t.Errorf("styled %v at %d reads %q, want %q", c.a, c.width, got, c.want)
		}
	}
	if got := Title(a, "calc"); got != "ultra[build|A|trusted|smart] calc" {
		t.Errorf("title %q", got)
	}
}

// Each axis value has its colour, as the table says (ANSI 8 dim, 5
// accent, 2 success, 3 warning, 1 error, 6 info).
func TestBadgeColours(t *testing.T) {
	for v, want := range map[string]string{"chat": "8", "plan": "5", "build": "2", "review": "3", "repair": "1", "research": "6",
		"manual": "8", "assisted": "3", "autonomous": "2", "restricted": "2", "normal": "8", "trusted": "3", "unrestricted": "1"} {
		c, ok := valueColor[v]
		if !ok {
			t.Errorf("%s has no colour", v)
			continue
		}
		if fmt.Sprint(c) != fmt.Sprint(lipgloss.Color(want)) {
			t.Errorf("%s is %v, want ANSI %s", v, c, want)
		}
	}
}

// newDemo is a TUI following a demo run, as of its events.
func newDemo(t testing.TB, width, height int, control string) (*Model, *fake) {
	f := newFake()
	demoRun(f, "20261124-120000-abcdef", control)
	m := New(Options{Backend: f, Project: "calc", Axes: axes.Default, Attach: "20261124-120000-abcdef", Now: func() time.Time { return t0.Add(time.Minute) }})
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	pump(t, m, m.pollCmd())
	return m, f
}

// pump runs cmd and feeds its messages back to m, as the program would
// (ticks excepted, so the test decides when time passes).
func pump(t testing.TB, m *Model, cmd tea.Cmd) {
	for i := 0; cmd != nil && i < 50; i++ {
		msg := cmd()
		switch msg := msg.(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				pump(t, m, c)
			}
			return
		case tickMsg, nil:
			return
		}
		_, cmd = m.Update(msg)
	}
}

// press types keys as a person who has seen the screen: a prompt on it
// has been there longer than its grace (TestPromptGrace tests that).
func press(m *Model, keys ...string) tea.Cmd {
	var cmds []tea.Cmd
	for _, k := range keys {
		m.seeAsk()
		m.askSince = m.askSince.Add(-askGrace)
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "ctrl+c":
			msg = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
		case "alt+m", "alt+a", "alt+s", "alt+i", "alt+r", "alt+p", "alt+t":
			msg = tea.KeyPressMsg{Code: rune(k[4]), Mod: tea.ModAlt}
		case "ctrl+shift+m":
			msg = tea.KeyPressMsg{Code: 'm', Mod: tea.ModCtrl | tea.ModShift}
		default:
			for _, r := range k {
				// Typing into the input only makes its cursor blink;
				// a single letter may answer a prompt or drive a panel.
				_, c := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
				if len(k) == 1 {
					cmds = append(cmds, c)
				}
			}
			continue
		}
		_, c := m.Update(msg)
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...)
}

func screen(m *Model) string { return ansi.Strip(m.Render()) }

// Golden frames of a run in the middle of its work, wide and narrow.
func TestGoldenFrames(t *testing.T) {
	for _, w := range []int{120, 70} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			m, _ := newDemo(t, w, 40, "manual")
			golden.RequireEqual(t, []byte(screen(m)+"\n"))
		})
	}
}

func TestFrameShowsTheRun(t *testing.T) {
	m, _ := newDemo(t, 120, 50, "manual")
	s := screen(m)
	for _, want := range []string{
		"ultra build | manual | trusted | smart",            // the badge after the name
		"Plan", "calc.go", "-return a - b", "+return a + b", // markdown, the edit as a diff
		"▸ thinking (2 lines",                    // thinking folded
		"✗ bash go test ./...", "… 2 more lines", // a failed call, output folded
		"gate FAIL", "✗ calc.TestMul", "✗ calc.TestDiv", // the failing tests
		"calc_test.go:9: Mul(2, 3) = 5, want 6",            // and why, where the runner said
		"refused [policy] bash", "git push is not allowed", // the refusal with its layer
		"approve this call? write", "a allow once", "r allow write for this run", "d deny with a reason",
		"phase iterating", "goal g1", "goal g1 · cycles 3/5", "12.4k tok", "$0.0321",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the frame lacks %q:\n%s", want, s)
		}
	}
	if got := m.View().WindowTitle; got != "ultra[build|M|trusted|smart] calc" {
		t.Errorf("title %q", got)
	}
	// ctrl+o and ctrl+t unfold.
	m.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	s = screen(m)
	for _, want := range []string{"line 5", "Add subtracts."} {
		if !strings.Contains(s, want) {
			t.Errorf("unfolded frame lacks %q:\n%s", want, s)
		}
	}
}

func TestCompactBadgeUnder80(t *testing.T) {
	m, _ := newDemo(t, 70, 30, "autonomous")
	first := strings.SplitN(screen(m), "\n", 2)[0]
	if !strings.HasPrefix(first, "ultra [B][A][T][S]") {
		t.Errorf("header %q", first)
	}
}

// A slash command changes the next run's axes when no run is live, and
// steers the live run otherwise; a shortcut is the same command.
func TestSlashCommandsAndShortcuts(t *testing.T) {
	m := New(Options{Backend: newFake(), Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	pump(t, m, press(m, "/mode repair --manual --permission-profile trusted", "enter"))
	if a := m.Axes(); a.Mode != "repair" || a.Control != "manual" || a.Permission != "trusted" {
		t.Fatalf("axes %v", a)
	}
	pump(t, m, press(m, "alt+m")) // repair → research
	if a := m.Axes(); a.Mode != "research" {
		t.Fatalf("alt+m: %v", a)
	}
	pump(t, m, press(m, "ctrl+shift+m")) // research → chat
	if a := m.Axes(); a.Mode != "chat" {
		t.Fatalf("ctrl+shift+m: %v", a)
	}
	pump(t, m, press(m, "alt+a", "alt+p"))
	if a := m.Axes(); a.Control != "autonomous" || a.Permission != "unrestricted" {
		t.Fatalf("alt+a alt+p: %v", a)
	}
	if !strings.Contains(screen(m), "ultra chat | autonomous | unrestricted | smart") {
		t.Errorf("badge:\n%s", screen(m))
	}

	live, f := newDemo(t, 120, 40, "autonomous")
	id := "20261124-120000-abcdef"
	pump(t, live, press(live, "/mode repair --manual --scope now", "enter"))
	if got, want := f.lastExec(), []string{"steer", id, "--mode", "repair", "--control", "manual", "--scope", "now"}; !slices.Equal(sorted(got), sorted(want)) || got[0] != "steer" || got[1] != id {
		t.Errorf("steered with %v, want %v", got, want)
	}
	pump(t, live, press(live, "alt+i"))
	if got := f.lastExec(); !slices.Contains(got, "--control") || !slices.Contains(got, "manual") || got[0] != "steer" {
		t.Errorf("alt+i ran %v", got)
	}
	pump(t, live, press(live, "/bogus", "enter"))
	if !strings.Contains(screen(live), "unknown command /bogus") {
		t.Errorf("an unknown command is not named:\n%s", screen(live))
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// Every command of the table is handled by the TUI: none falls through
// to an unknown-command error or a crash.
func TestEveryCommandHandled(t *testing.T) {
	for _, c := range command.Table {
		if !c.On(command.TUI) {
			continue
		}
		m, f := newDemo(t, 120, 40, "autonomous")
		line := "/" + c.Name
		switch c.Name {
		case "mode":
			line += " repair"
		case "control":
			line += " assisted"
		case "permission-profile":
			line += " trusted"
		case "model-mode":
			line += " deep"
		case "steer":
			line += " --mode repair"
		case "deny":
			line += " no"
		case "attach":
			f.setRow(&store.Run{ID: "20261124-170000-ffffff", Status: "complete", Axes: axes.Default})
			line += " 20261124-170000-ffffff"
		case "model":
			line += " other-model"
		}
		itemsBefore := len(m.sess.Items())
		pump(t, m, press(m, line, "enter"))
		for _, it := range m.sess.Items()[min(itemsBefore, len(m.sess.Items())):] {
			if it.Kind == KindError {
				t.Errorf("%s: %s %s", line, it.Title, it.Body)
			}
		}
		// Each command does what it stands for: the command line's
		// command, or the screen's own effect.
		var ran []string
		if len(f.execs) > 0 {
			ran = f.execs[len(f.execs)-1]
		}
		if len(f.starts) > 0 {
			ran = f.starts[len(f.starts)-1]
		}
		switch c.Name {
		case "tasks":
			if m.ov != ovTasks {
				t.Errorf("%s: no tasks panel", line)
			}
		case "attach":
			if m.sess.Run != "20261124-170000-ffffff" {
				t.Errorf("%s: follows %s", line, m.sess.Run)
			}
		case "help":
			if it := m.sess.Items()[len(m.sess.Items())-1]; it.Kind != KindInfo || ran != nil {
				t.Errorf("%s: %+v, ran %v", line, it, ran)
			}
		case "model":
			// The screen's own, checked with the server.
			if m.model != "other-model" || !slices.Equal(ran, []string{"models", "--json"}) {
				t.Errorf("%s: model %q, ran %v", line, m.model, ran)
			}
		case "clear":
			if len(m.sess.Items()) != 0 || ran != nil {
				t.Errorf("%s: %d items, ran %v", line, len(m.sess.Items()), ran)
			}
		default:
			if len(ran) == 0 || ran[0] != c.CLI[0] {
				t.Errorf("%s ran %v, want ultra %s …", line, ran, strings.Join(c.CLI, " "))
			}
		}
	}
}

// A message with no run starts one with the next run's axes; in a chat
// session it is the next question.
func TestMessagesStartRuns(t *testing.T) {
	f := newFake()
	f.startID = "20261124-140000-bbbbbb"
	m := New(Options{Backend: f, Axes: axes.Axes{Mode: "build", Control: "assisted", Permission: "normal", ModelMode: "fast"}, Model: "m1", Extra: []string{"--base-url", "http://x"}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	f.setRow(&store.Run{ID: f.startID, Status: "running", Axes: axes.Default})
	pump(t, m, press(m, "fix the parser", "enter"))
	want := []string{"run", "--mode", "build", "--control", "assisted", "--permission-profile", "normal", "--model-mode", "fast", "--model", "m1", "--base-url", "http://x", "--output", "jsonl", "--", "fix the parser"}
	if len(f.starts) != 1 || !slices.Equal(f.starts[0], want) {
		t.Fatalf("started %v, want %v", f.starts, want)
	}
	if m.sess.Run != f.startID {
		t.Errorf("follows %q", m.sess.Run)
	}
	// The live run gets no message; the text stays in the input.
	pump(t, m, press(m, "more", "enter"))
	if len(f.starts) != 1 || m.input.Value() != "more" {
		t.Errorf("a message to a live run: starts %v, input %q", f.starts, m.input.Value())
	}
}

// Model text reaches the screen without its escape sequences.
func TestModelTextMadePrintable(t *testing.T) {
	f := newFake()
	id := "20261124-150000-cccccc"
	f.setRow(&store.Run{ID: id, Status: "running", Axes: axes.Default})
	f.add(id, event.AssistantText, "building", event.AssistantTextData{Text: "hi \x1b]52;c;ZXZpbA==\x07there \x1b[2J"})
	f.rts[id] = store.Runtime{Activity: "waiting for the model", Partial: "part \x1b]0;owned\x07ial"}
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	pump(t, m, m.pollCmd())
	raw := m.Render()
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\x1b]0;owned"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the frame carries %q", bad)
		}
	}
	if s := screen(m); !strings.Contains(s, "hi there") || !strings.Contains(s, "part ial") {
		t.Errorf("frame:\n%s", s)
	}
}

// The conversation renders only what is on screen: scrolling up shows
// older items, and the bottom follows new ones.
func TestScroll(t *testing.T) {
	f := newFake()
	id := "20261124-160000-dddddd"
	f.setRow(&store.Run{ID: id, Status: "running", Axes: axes.Default})
	for i := range 200 {
		f.add(id, event.AssistantText, "building", event.AssistantTextData{Text: fmt.Sprintf("message %d", i)})
	}
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	pump(t, m, m.pollCmd())
	if s := screen(m); !strings.Contains(s, "message 199") || strings.Contains(s, "message 150") {
		t.Fatalf("bottom:\n%s", s)
	}
	for range 40 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	if s := screen(m); !strings.Contains(s, "message 0") {
		t.Fatalf("top:\n%s", s)
	}
	for range 40 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	if s := screen(m); !strings.Contains(s, "message 199") {
		t.Fatalf("back at the bottom:\n%s", s)
	}
}

func TestTasksPanel(t *testing.T) {
	m, f := newDemo(t, 120, 40, "autonomous")
	other := "20261124-170000-eeeeee"
	f.setRow(&store.Run{ID: other, Task: "other", Status: "paused", Axes: axes.Default})
	f.tasks = append(f.tasks, rowOf("20261124-120000-abcdef", "running"), rowOf(other, "waiting"))
	pump(t, m, press(m, "alt+t"))
	s := screen(m)
	if !strings.Contains(s, "tasks") || !strings.Contains(s, other) {
		t.Fatalf("panel:\n%s", s)
	}
	pump(t, m, press(m, "j", "p"))
	if got := f.lastExec(); !slices.Equal(got, []string{"pause", other}) {
		t.Errorf("p ran %v", got)
	}
	pump(t, m, press(m, "enter"))
	if m.sess.Run != other || m.ov != ovNone {
		t.Errorf("enter attached to %q (overlay %d)", m.sess.Run, m.ov)
	}
}

func TestCompletion(t *testing.T) {
	m := New(Options{Backend: newFake(), Axes: axes.Default, Files: []string{"cmd/main.go", "internal/calc/calc.go", "internal/calc/calc_test.go"}})
	pump(t, m, press(m, "/permi", "tab"))
	if v := m.input.Value(); v != "/permission-profile " {
		t.Errorf("completed %q", v)
	}
	m.input.Reset()
	pump(t, m, press(m, "look at @internal/calc/calc_", "tab"))
	if v := m.input.Value(); v != "look at @internal/calc/calc_test.go " {
		t.Errorf("completed %q", v)
	}
}

func rowOf(id, class string) tasks.Row {
	r := tasks.Row{ID: id, Task: "t", Mode: "build", Axes: axes.Default, Status: "running", Phase: "building"}
	r.Class.Class = class
	return r
}

// A command at work shows the tail of its output as it comes.
func TestRunningCommandOutput(t *testing.T) {
	f := newFake()
	id := "20261124-150000-eeeeee"
	f.setRow(&store.Run{ID: id, Status: "running", Axes: axes.Default})
	var out strings.Builder
	for i := range 20 {
		fmt.Fprintf(&out, "ok %d\n", i)
	}
	f.rts[id] = store.Runtime{Activity: "running `go test ./...`", Partial: out.String()}
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	pump(t, m, m.pollCmd())
	s := screen(m)
	if !strings.Contains(s, "┌ running `go test ./...`") || !strings.Contains(s, "│ ok 19") || strings.Contains(s, "ok 11\n") {
		t.Fatalf("frame:\n%s", s)
	}
	if strings.Contains(s, "│ ok 11") {
		t.Errorf("more than %d lines of output:\n%s", liveOutputLines, s)
	}
}

// The model's thinking streams in before its answer: folded to its
// newest line (Ctrl+T shows it whole), the status saying the model
// thinks; then the answer streams below it.
func TestStreamingThinking(t *testing.T) {
	f := newFake()
	id := "20261124-150000-ffffff"
	f.setRow(&store.Run{ID: id, Status: "running", Axes: axes.Default})
	f.rts[id] = store.Runtime{Activity: "waiting for the model", Thinking: "first idea\nsecond idea"}
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	pump(t, m, m.pollCmd())
	s := screen(m)
	if !strings.Contains(s, "▸ thinking (2 lines") || !strings.Contains(s, "  second idea") || strings.Contains(s, "first idea") ||
		!strings.Contains(s, "the model is thinking") {
		t.Fatalf("frame:\n%s", s)
	}
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	if s = screen(m); !strings.Contains(s, "first idea") {
		t.Fatalf("ctrl+t does not show the thinking:\n%s", s)
	}
	f.rts[id] = store.Runtime{Activity: "waiting for the model", Thinking: "first idea\nsecond idea", Partial: "The answer"}
	pump(t, m, m.pollCmd())
	if s = screen(m); !strings.Contains(s, "The answer") || !strings.Contains(s, "the model is answering") {
		t.Fatalf("frame:\n%s", s)
	}
}

// A run that ended is history: the badge shows the next run's axes, and
// shortcuts change those; a live run's mode cycles only among the modes
// it can become.
func TestAxesOfWhatTypingDoes(t *testing.T) {
	f := newFake()
	id := "20261124-200000-aaaaaa"
	done := axes.Axes{Mode: "plan", Control: "autonomous", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Status: "cancelled", Axes: done})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "t", Axes: done})
	next := axes.Axes{Mode: "build", Control: "assisted", Permission: "trusted", ModelMode: "deep", Surface: "tui"}
	m := New(Options{Backend: f, Attach: id, Axes: next})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	pump(t, m, m.pollCmd())
	if h := strings.SplitN(screen(m), "\n", 2)[0]; !strings.HasPrefix(h, "ultra build | assisted | trusted | deep") {
		t.Fatalf("header %q", h)
	}
	for _, want := range []string{"review", "repair", "research", "chat", "plan", "build"} {
		pump(t, m, press(m, "alt+m"))
		if got := m.Axes().Mode; got != want {
			t.Fatalf("alt+m gave %s, want %s", got, want)
		}
	}
	if len(f.execs) != 0 {
		t.Errorf("shortcuts on an ended run ran %v", f.execs)
	}

	live, lf := newDemo(t, 120, 40, "autonomous")
	for _, want := range []string{"repair", "plan", "build"} {
		pump(t, live, press(live, "alt+m"))
		got := lf.lastExec()
		if len(got) < 4 || got[0] != "steer" || !slices.Contains(got, want) {
			t.Fatalf("alt+m on a live build run ran %v, want a steer to %s", got, want)
		}
		// The run takes the change: its event says so.
		lf.add("20261124-120000-abcdef", event.AxisChanged, "iterating", event.AxisChangedData{Axis: "mode", To: want,
			Axes: axes.Axes{Mode: want, Control: "autonomous", Permission: "trusted", ModelMode: "smart"}})
		pump(t, live, live.pollCmd())
	}
}

func TestAttachNamesAMissingRun(t *testing.T) {
	m, _ := newDemo(t, 120, 40, "autonomous")
	pump(t, m, press(m, "/attach nosuchrun", "enter"))
	if m.sess.Run != "20261124-120000-abcdef" || !strings.Contains(screen(m), "/attach: run not found: nosuchrun") {
		t.Fatalf("follows %q:\n%s", m.sess.Run, screen(m))
	}
}

// Stopping or cancelling from the tasks panel takes a second press; a
// running task is not resumed.
func TestTasksPanelConfirms(t *testing.T) {
	m, f := newDemo(t, 120, 40, "autonomous")
	id := "20261124-120000-abcdef"
	f.tasks = []tasks.Row{rowOf(id, "running")}
	pump(t, m, press(m, "alt+t"))
	pump(t, m, press(m, "c"))
	if len(f.execs) != 0 || !strings.Contains(screen(m), "press c again to cancel "+id) {
		t.Fatalf("one c ran %v:\n%s", f.execs, screen(m))
	}
	pump(t, m, press(m, "c"))
	if got := f.lastExec(); !slices.Equal(got, []string{"cancel", id}) {
		t.Fatalf("c c ran %v", got)
	}
	pump(t, m, press(m, "s"))
	pump(t, m, press(m, "j"))
	pump(t, m, press(m, "s"))
	if got := f.lastExec(); got[0] != "cancel" {
		t.Fatalf("s j s ran %v", got)
	}
	pump(t, m, press(m, "r"))
	if got := f.lastExec(); got[0] != "cancel" || !strings.Contains(screen(m), "is running") {
		t.Fatalf("r on a running task ran %v", got)
	}
}

func TestNextStepsWhenARunEnds(t *testing.T) {
	f := newFake()
	id := "20261124-210000-aaaaaa"
	f.setRow(&store.Run{ID: id, Status: "complete", Axes: axes.Default})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "t", Axes: axes.Default})
	f.add(id, event.RunFinished, "complete", event.RunFinishedData{Status: "complete", Reason: "the final review approved"})
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	pump(t, m, m.pollCmd())
	if !strings.Contains(screen(m), "next: /diff reads the change, /land merges it") {
		t.Fatalf("no next steps:\n%s", screen(m))
	}
}

// Tiny terminals do not crash the TUI.
func TestTinyTerminal(t *testing.T) {
	m, f := newDemo(t, 120, 40, "manual")
	f.rts["20261124-120000-abcdef"] = store.Runtime{Activity: "running `go test`", Partial: "ok\n"}
	pump(t, m, m.pollCmd())
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {3, 2}, {10, 5}, {0, 0}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		_ = m.Render()
	}
}

func TestOverwrittenLines(t *testing.T) {
	for in, want := range map[string]string{
		"plain\nlines\n":                 "plain\nlines\n",
		"10%\r50%\r100%\ndone\n":         "100%\ndone\n",
		"crlf line\r\nnext\r\n":          "crlf line\nnext\n",
		"downloading 1\rdownloading 2\r": "downloading 2",
	} {
		if got := overwritten(in); got != want {
			t.Errorf("overwritten(%q) = %q, want %q", in, got, want)
		}
	}
}

// The tasks panel's selection stays on its run when the rows reorder.
func TestTasksSelectionFollowsTheRun(t *testing.T) {
	m, f := newDemo(t, 120, 40, "autonomous")
	a, b := "20261124-010000-aaaaaa", "20261124-020000-bbbbbb"
	f.tasks = []tasks.Row{rowOf(a, "running"), rowOf(b, "paused")}
	pump(t, m, press(m, "alt+t"))
	pump(t, m, press(m, "j"))
	f.tasks = []tasks.Row{rowOf(b, "paused"), rowOf(a, "failed")}
	pump(t, m, m.tasksCmd())
	if m.rows[m.sel].ID != b {
		t.Fatalf("selection moved to %s", m.rows[m.sel].ID)
	}
}

// Each PgUp moves the conversation by a screen less two rows, exactly,
// down to the top; PgDn comes back the same way.
func TestScrollMovesExactly(t *testing.T) {
	f := newFake()
	id := "20261124-160001-dddddd"
	f.setRow(&store.Run{ID: id, Status: "complete", Axes: axes.Default})
	for i := range 120 {
		text := fmt.Sprintf("message %d", i)
		if i%7 == 0 {
			text += "\nwith a second line\nand a third"
		}
		f.add(id, event.AssistantText, "building", event.AssistantTextData{Text: text})
	}
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	pump(t, m, m.pollCmd())
	var all []string
	for i := range m.sess.Items() {
		all = append(all, m.lines(i)...)
	}
	rows, step := m.convHeight(), m.convHeight()-2
	view := func() []string { return m.conversation(rows) }
	want := func(end int) []string {
		if end < rows {
			return all[:rows]
		}
		return all[end-rows : end]
	}
	for k := 0; ; k++ {
		end := len(all) - k*step
		if got := view(); !slices.Equal(got, want(end)) {
			t.Fatalf("after %d PgUp: got\n%s\nwant\n%s", k, strings.Join(got, "\n"), strings.Join(want(end), "\n"))
		}
		if end <= rows {
			break
		}
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	for range 100 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	if got := view(); !slices.Equal(got, want(len(all))) {
		t.Fatalf("back at the bottom:\n%s", strings.Join(got, "\n"))
	}
}

// A large paste takes one line of the input, as a placeholder, and is
// sent whole; a small one is typed in as it is.
func TestLargePasteFolded(t *testing.T) {
	f := newFake()
	f.startID = "20261124-160000-aaaaaa"
	m := New(Options{Backend: f, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	var big strings.Builder
	for i := range 30 {
		fmt.Fprintf(&big, "log line %d\n", i)
	}
	m.Update(tea.KeyPressMsg{Code: 'x', Text: "fix this: "})
	m.Update(tea.PasteMsg{Content: big.String()})
	m.Update(tea.PasteMsg{Content: "small"})
	s := screen(m)
	if !strings.Contains(s, "[pasted text #1, 30 lines]small") || strings.Contains(s, "log line 29") {
		t.Fatalf("the input:\n%s", s)
	}
	pump(t, m, press(m, "enter"))
	if len(f.starts) != 1 {
		t.Fatalf("starts %v", f.starts)
	}
	args := f.starts[0]
	task := args[len(args)-1]
	if !strings.HasPrefix(task, "fix this: log line 0\n") || !strings.Contains(task, "log line 29\nsmall") {
		t.Fatalf("the task sent: %q", task)
	}
}

// /model NAME is checked with the server at once: a name it does not
// list is said on screen, not at the next run's preflight.
func TestModelCheckedWithTheServer(t *testing.T) {
	f := newFake()
	f.execOut = map[string]string{"models": `{"provider":"openai","base_url":"http://127.0.0.1:9/v1","models":["gpt-a","gpt-b"]}`}
	m := New(Options{Backend: f, Axes: axes.Default, Extra: []string{"--provider", "openai"}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, press(m, "/model gpt-x", "enter"))
	if got := f.lastExec(); !slices.Equal(got, []string{"models", "--json", "--provider", "openai"}) {
		t.Fatalf("ran %v", got)
	}
	last := m.sess.Items()[len(m.sess.Items())-1]
	if last.Kind != KindError || !strings.Contains(last.Title, "does not list gpt-x") || !strings.Contains(last.Body, "gpt-a, gpt-b") {
		t.Fatalf("after /model gpt-x: %+v", last)
	}
	n := len(m.sess.Items())
	pump(t, m, press(m, "/model gpt-b", "enter"))
	for _, it := range m.sess.Items()[n:] {
		if it.Kind == KindError {
			t.Fatalf("a listed model: %+v", it)
		}
	}
	if m.model != "gpt-b" {
		t.Fatalf("model %q", m.model)
	}
}

// /NAME of a skill starts a build run with --skill NAME (the text after
// it the task); a command's name stays the command's; Tab completes a
// skill's name; /help lists the skills.
func TestSkillSlash(t *testing.T) {
	f := newFake()
	f.startID = "20261124-140000-cccccc"
	m := New(Options{Backend: f, Axes: axes.Axes{Mode: "chat", Control: "autonomous", Permission: "normal", ModelMode: "smart"},
		Skills: []Skill{{Name: "go-fix", Description: "Fix a failing Go test"}, {Name: "tasks", Description: "a skill named as a command"}}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, press(m, "/go-f", "tab"))
	if m.input.Value() != "/go-fix " {
		t.Fatalf("tab completed %q", m.input.Value())
	}
	m.input.Reset()
	pump(t, m, press(m, "/go-fix the parser test", "enter"))
	want := []string{"run", "--mode", "build", "--control", "autonomous", "--permission-profile", "normal", "--model-mode", "smart", "--skill", "go-fix", "--output", "jsonl", "--", "the parser test"}
	if len(f.starts) != 1 || !slices.Equal(f.starts[0], want) {
		t.Fatalf("started %v, want %v", f.starts, want)
	}
	f.setRow(&store.Run{ID: f.startID, Status: "complete", Axes: axes.Default})
	pump(t, m, press(m, "/tasks", "enter"))
	if len(f.starts) != 1 {
		t.Fatalf("/tasks started a run: %v", f.starts)
	}
}

func TestSkillsInHelp(t *testing.T) {
	if h := skillsHelp([]Skill{{Name: "go-fix", Description: "Fix a failing Go test"}}); !strings.Contains(h, "/go-fix") || !strings.Contains(h, "Fix a failing Go test") {
		t.Fatalf("help: %q", h)
	}
	if skillsHelp(nil) != "" {
		t.Fatal("help without skills lists some")
	}
}
