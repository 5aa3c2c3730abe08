package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// markerAdd breaks Add on its first call in a directory, leaving a marker
// file there, and adds on every later call: a test of it fails, then
// passes when it runs again in the same checkout.
const markerAdd = `package calc

import "os"

// Add returns a plus b.
func Add(a, b int) int {
	if _, err := os.Stat(".calc-warm"); err != nil {
		os.WriteFile(".calc-warm", nil, 0o644)
		return a - b
	}
	return a + b
}

// Sub returns a minus b.
func Sub(a, b int) int { return a - b }
`

// A test that passed at the start and fails after the change does not
// pass for flaky through a marker its first run left in the checkout:
// the checkout is the tree again before failed tests run again, so the
// re-run fails too and the gate fails (it would say CONCERNS, "flaky",
// and complete the goal otherwise).
func TestMarkerCannotMakeAReRunPass(t *testing.T) {
	t.Parallel()
	green := map[string]string{
		"go.mod":            "module example.com/calc\n\ngo 1.21\n",
		"calc/calc.go":      "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
	}
	dir := repo(t, green)
	subTest := "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n\t\tt.Fatal(\"sub\")\n\t}\n}\n\nfunc TestSubNeg(t *testing.T) {\n\tif Sub(3, 5) != -2 {\n\t\tt.Fatal(\"neg\")\n\t}\n}\n"
	g := goalsOf("Sub subtracts",
		crit("happy", "command", "Sub subtracts", map[string]any{"run": "go test -count=1 -run '^TestSub$' -v ./calc", "expect_stdout": "--- PASS: TestSub"}),
		crit("edge", "command", "Sub goes negative", map[string]any{"run": "go test -count=1 -run '^TestSubNeg$' -v ./calc", "expect_stdout": "--- PASS: TestSubNeg"}),
		crit("regression", "command", "the package still builds", map[string]any{"run": "go build ./...", "expect_exit": 0}))
	m := newModel(t,
		calls(call("goals", g)),
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("write", map[string]any{"file_path": "calc/calc.go", "content": markerAdd}), call("write", map[string]any{"file_path": "calc/sub_test.go", "content": subTest})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})))
	res := ultra(t, dir, runArgs(m, "Add Sub to calc")...)
	vr := ofType(res.events(t), "verify_result")
	if len(vr) != 1 {
		t.Fatalf("verifications %v\n%s", vr, res.stderr)
	}
	d := fmt.Sprint(data(vr[0]))
	if data(vr[0])["status"] != "FAIL" || !strings.Contains(d, "TestAdd") || strings.Contains(strings.ToLower(d), "flaky") {
		t.Fatalf("the verification of a change that breaks TestAdd: %v", data(vr[0]))
	}
	if out := git(t, dir, "log", "--format=%s", "main..ultra/"+runID(t, res.events(t))); strings.Contains(out, "Sub subtracts") {
		t.Fatalf("the goal was committed:\n%s", out)
	}
}
