package e2e

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The human log's live part on a terminal, and its absence elsewhere:
// the real binary runs in a tmux pane (a real terminal) and in a pipe.

// spinnerFrames are the frames of the live log's spinner.
const spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

// slowCalcProject is calcProject with a test that takes a while, so the
// spinner has tests to wait on.
func slowCalcProject() map[string]string {
	files := map[string]string{}
	for k, v := range calcProject {
		files[k] = v
	}
	files["calc/slow_test.go"] = "package calc\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) { time.Sleep(2 * time.Second) }\n"
	return files
}

// streamedAnswer is a first answer that arrives slowly: a while before
// its first piece, then four characters at a time.
const streamedAnswer = "Reading calc.go first, then fixing Add so that it adds its two arguments.\nThe tests will tell: end-of-answer."

func slowFirstStep() step {
	return step{"text": streamedAnswer, "delay_ms": 1500, "chunk_size": 4, "chunk_delay_ms": 50,
		"tool_calls": []any{call("read", map[string]any{"file_path": "calc/calc.go"}), call("glob", map[string]any{"pattern": "**/*_test.go"})}}
}

// humanArgs are the arguments of a run with the human log against m.
func humanArgs(m *model, extra ...string) []string {
	args := runArgs(m, extra...)
	args[2] = "human"
	return args
}

func lastLine(sc []string) string {
	for i := len(sc) - 1; i >= 0; i-- {
		if strings.TrimSpace(sc[i]) != "" {
			return sc[i]
		}
	}
	return ""
}

// On a terminal the log is live: a spinner line under it says what the
// run waits on and for how long, with the tokens spent; the answer
// appears as it streams in, once; the run's end leaves no spinner line.
// NO_COLOR takes the colours away, not the live part.
func TestLineModeTerminal(t *testing.T) {
	t.Parallel()
	dir := repo(t, slowCalcProject())
	m := newModel(t, append([]step{slowFirstStep()}, fixSteps()[1:]...)...)
	p := startPane(t, dir, ultraEnv(t), 120, 40, humanArgs(m, "fix calc")...)
	screens, code := p.watch()
	final := p.screen(true)
	all := strings.Join(final, "\n")
	if code != 0 {
		t.Fatalf("exit %d; the pane:\n%s", code, all)
	}
	waiting := regexp.MustCompile(`^[` + spinnerFrames + `] waiting for the model [1-9][0-9]*s$`)
	tests := regexp.MustCompile(`^[` + spinnerFrames + `] running the tests [0-9]+s · [0-9.]+k? tokens$`)
	var sawWaiting, sawPartial, sawTests bool
	for _, sc := range screens {
		last := lastLine(sc)
		text := strings.Join(sc, "\n")
		sawWaiting = sawWaiting || waiting.MatchString(last)
		sawTests = sawTests || tests.MatchString(last)
		// Part of the answer is on the screen while the model is still
		// answering.
		if strings.Contains(text, "Reading calc.go") && !strings.Contains(text, "end-of-answer") && strings.Contains(last, "waiting for the model") {
			sawPartial = true
		}
	}
	if !sawWaiting || !sawPartial || !sawTests {
		var b strings.Builder
		for _, sc := range screens {
			fmt.Fprintf(&b, "--- %s\n", lastLine(sc))
		}
		t.Fatalf("spinner waiting for the model with seconds %v, answer streaming %v, tests with tokens %v; last lines of %d screens:\n%s",
			sawWaiting, sawPartial, sawTests, len(screens), b.String())
	}
	// The answer is shown once, as it streamed, under the phase badge.
	if strings.Count(all, "Reading calc.go first") != 1 || !strings.Contains(all, "[planning ] The tests will tell: end-of-answer.") {
		t.Errorf("the streamed answer is not shown once:\n%s", all)
	}
	if strings.ContainsAny(all, spinnerFrames) || strings.Contains(all, "waiting for the model") {
		t.Errorf("a spinner line is left on the screen:\n%s", all)
	}
	if n := len(final); n < 2 || !strings.Contains(final[n-2], "✔ complete") || !strings.Contains(final[n-1], "exit 0") {
		t.Errorf("the screen does not end with the run's end:\n%s", all)
	}
	raw := p.rawOutput()
	if !strings.Contains(raw, "\r\x1b[K") {
		t.Errorf("the spinner line was never erased: %q", raw)
	}
	if sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`).FindString(raw); sgr != "" {
		t.Errorf("NO_COLOR is set, yet the log wrote colour %q", sgr)
	}
	if rest := regexp.MustCompile(`\r\x1b\[K|\x1b\[A`).ReplaceAllString(raw, ""); strings.Contains(rest, "\x1b") {
		t.Errorf("an escape sequence other than erasing the spinner line: %q", rest)
	}
}

// In a pipe the log is one plain line per event: no spinner, no streamed
// text, no escape sequence; the answer is one line of its own.
func TestLineModePipe(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	first := slowFirstStep()
	first["delay_ms"], first["chunk_delay_ms"] = 300, 10
	m := newModel(t, append([]step{first}, fixSteps()[1:]...)...)
	env := ultraEnv(t)
	for i, kv := range env {
		if kv == "NO_COLOR=1" {
			env[i] = "NO_COLOR=" // colour is off because this is no terminal
		}
	}
	res := ultraRun(t, dir, env, humanArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	out := res.stdout
	if strings.ContainsAny(out, "\x1b\r") || strings.ContainsAny(out, spinnerFrames) || strings.Contains(out, "waiting for the model") {
		t.Fatalf("the log in a pipe has escapes or a spinner:\n%q", out)
	}
	if !strings.Contains(out, "[planning ] Reading calc.go first, then fixing Add so that it adds its two arguments. The tests will tell: end-of-answer.\n") ||
		strings.Count(out, "Reading calc.go") != 1 {
		t.Errorf("the answer is not one line of its own:\n%s", out)
	}
	if !strings.HasSuffix(strings.TrimRight(out, "\n"), "exit 0") {
		t.Errorf("the log does not end with the run's end:\n%s", out)
	}
}

// --quiet shows only what a person must see: here, the plan waiting for
// approval and the run's end. On a terminal it draws no spinner either.
// It does not touch --output jsonl.
func TestLineModeQuiet(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, humanArgs(m, "--quiet", "--control", "assisted", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var badged []string
	for _, line := range strings.Split(strings.TrimRight(res.stdout, "\n"), "\n") {
		if strings.HasPrefix(line, "[") {
			badged = append(badged, line)
		}
	}
	if len(badged) != 3 || !strings.Contains(badged[0], "plan waiting for approval") || !strings.Contains(badged[1], "⏸ needs_approval") ||
		!strings.Contains(badged[2], "exit 3") || strings.Contains(res.stdout, "read calc/calc.go") {
		t.Fatalf("--quiet log:\n%s", res.stdout)
	}

	// A run that only ends: its two last lines, and on a terminal
	// nothing else, not even while the model takes its time.
	slow := newModel(t, step{"text": "thinking it over", "delay_ms": 1200, "chunk_delay_ms": 50, "tool_calls": []any{call("read", map[string]any{"file_path": "calc/calc.go"})}})
	res = ultra(t, dir, humanArgs(slow, "-q", "--max-turns", "1", "look")...)
	lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	if res.code != 4 || len(lines) != 2 || !strings.Contains(lines[0], "✗ budget_exhausted") || !strings.Contains(lines[1], "exit 4") {
		t.Fatalf("exit %d; --quiet log:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	slow2 := newModel(t, step{"text": "thinking it over", "delay_ms": 1200, "chunk_delay_ms": 50, "tool_calls": []any{call("read", map[string]any{"file_path": "calc/calc.go"})}})
	p := startPane(t, dir, ultraEnv(t), 120, 40, humanArgs(slow2, "-q", "--max-turns", "1", "look")...)
	screens, code := p.watch()
	final := p.screen(true)
	// (The last line, on stderr, says why ultra exits 4.)
	if code != 4 || len(final) < 3 || !strings.Contains(final[0], "✗ budget_exhausted") || !strings.Contains(final[1], "exit 4") ||
		!strings.HasPrefix(final[2], "ultra: run ") {
		t.Fatalf("exit %d; --quiet on a terminal:\n%s", code, strings.Join(final, "\n"))
	}
	for _, sc := range screens {
		if s := strings.Join(sc, "\n"); strings.ContainsAny(s, spinnerFrames) || strings.Contains(s, "thinking it over") {
			t.Fatalf("--quiet on a terminal showed:\n%s", s)
		}
	}
	if raw := p.rawOutput(); strings.Contains(raw, "\x1b") {
		t.Errorf("--quiet with NO_COLOR wrote an escape sequence: %q", raw)
	}

	// --quiet and --verbose contradict; --quiet leaves JSONL alone.
	if res := ultra(t, dir, humanArgs(m, "-q", "-v", "x")...); res.code != 2 || !strings.Contains(res.stderr, "--quiet and --verbose") {
		t.Errorf("-q -v: exit %d: %s", res.code, res.stderr)
	}
	types := func(extra ...string) []string {
		mm := newModel(t, step{"text": "a look", "tool_calls": []any{call("read", map[string]any{"file_path": "calc/calc.go"})}})
		res := ultra(t, dir, runArgs(mm, append(extra, "--max-turns", "1", "look")...)...)
		var out []string
		for _, e := range res.events(t) {
			// The baseline runs alongside: whether it ends before the
			// run does varies, and with it the red base's warning.
			if d, _ := e["data"].(map[string]any); e["type"] == "warning" && d != nil && strings.Contains(fmt.Sprint(d["message"]), "already fail on the base tree") {
				continue
			}
			if e["type"] != "baseline" {
				out = append(out, e["type"].(string))
			}
		}
		return out
	}
	if loud, quiet := types(), types("--quiet"); strings.Join(loud, " ") != strings.Join(quiet, " ") {
		t.Errorf("--quiet changed the JSONL events:\n%v\n%v", loud, quiet)
	}
}

// A reader that goes away (ultra run … | head) does not kill the run: the
// log stops, the run goes on to its end and is recorded complete, and
// ultra exits with the run's code.
func TestLogReaderGoneRunGoesOn(t *testing.T) {
	t.Parallel()
	t.Run("human", func(t *testing.T) { readerGone(t, humanArgs) })
	t.Run("jsonl", func(t *testing.T) { readerGone(t, runArgs) })
}

func readerGone(t *testing.T, args func(*model, ...string) []string) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, slow(fixSteps(), 200)...)
	cmd := exec.Command(ultraBin, args(m, "fix calc")...)
	cmd.Dir, cmd.Env = dir, ultraEnv(t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	out.Close() // the reader is gone, as head's is after its lines
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("ultra after its reader went away: %v (first line %q)\n%s", err, first, stderr.String())
	}
	id := onlyRun(t, dir)
	if st := statusJSON(t, dir, id); st["status"] != "complete" {
		t.Fatalf("the run: %v", st["status"])
	}
}
