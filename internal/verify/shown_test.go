package verify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
)

// A sandbox that shows the project at another path: the absolute paths
// the runner reports lie there, and ultra reads them relative to it.
func TestReportedPathsWhereTheSandboxShowsTheProject(t *testing.T) {
	root, shown := t.TempDir(), "/inside/project"
	rep := `{"numTotalTests":1,"testResults":[{"name":"` + shown + `/src/calc.test.js","status":"failed","assertionResults":[` +
		`{"ancestorTitles":[],"title":"adds","status":"failed","failureMessages":["boom"]}]}]}`
	d := Detected{Runner: "jest", Command: "printf '%s' '" + rep + `' > "$ULTRA_REPORT"; exit 1`, Format: "jest-json", Report: "$ULTRA_REPORT"}
	sb := &proc.Sandbox{At: func(p string) string {
		if p == root {
			return shown
		}
		return p
	}}
	res, err := runCommands(context.Background(), Request{Dir: root, LogDir: t.TempDir(), Sandbox: sb}, []Detected{d}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tests) != 1 || res.Tests[0].File != "src/calc.test.js" || !strings.HasPrefix(res.Tests[0].Name, "src/calc.test.js") {
		t.Fatalf("tests %+v, want one of src/calc.test.js", res.Tests)
	}
}
