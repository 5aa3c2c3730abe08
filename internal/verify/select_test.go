package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSplitGoName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, pkg, test string }{
		{"example.com/calc.TestSub", "example.com/calc", "TestSub"},
		{"example.com/calc.TestSub/case_1", "example.com/calc", "TestSub/case_1"},
		{"example.com/calc.TestSub/a.b/c", "example.com/calc", "TestSub/a.b/c"},
		{"calc.TestX", "calc", "TestX"},
		{"example.com/v2/pkg.ExampleFoo", "example.com/v2/pkg", "ExampleFoo"},
		{"example.com/calc", "example.com/calc", ""},
		{"TestOrphan", "", "TestOrphan"},
	} {
		pkg, test := splitGoName(tc.in)
		if pkg != tc.pkg || test != tc.test {
			t.Errorf("splitGoName(%q) = %q, %q; want %q, %q", tc.in, pkg, test, tc.pkg, tc.test)
		}
	}
}

func TestSelectCommand(t *testing.T) {
	t.Parallel()
	sel := func(how, pre string) Detected { return Detected{Command: pre, sel: selector{how: how, pre: pre}} }
	for _, tc := range []struct {
		name  string
		d     Detected
		names []string
		want  string // "" = cannot select
	}{
		{"go one package", sel("go", goCommand), []string{"example.com/a.TestX", "example.com/a.TestY/sub case", "example.com/a.TestX"},
			`go test -json -run '^TestX$|^TestY$/^sub case$' example.com/a`},
		{"go packages sharing a pattern", sel("go", goCommand), []string{"example.com/a.TestX", "example.com/b.TestX"},
			`go test -json -run '^TestX$' example.com/a example.com/b`},
		{"go packages apart", sel("go", goCommand), []string{"example.com/a.TestX", "example.com/b.TestY", "example.com/c"},
			`rc=0; go test -json -run '^TestX$' example.com/a || rc=$?; go test -json -run '^TestY$' example.com/b || rc=$?; go test -json example.com/c || rc=$?; exit $rc`},
		{"go regexp characters", sel("go", goCommand), []string{"example.com/a.TestX/a+b_(1)"},
			`go test -json -run '^TestX$/^a\+b_\(1\)$' example.com/a`},
		{"go repeated name", sel("go", goCommand), []string{"example.com/a.TestX #2"}, `go test -json -run '^TestX$' example.com/a`},
		{"go without package", sel("go", goCommand), []string{"TestX"}, ""},
		{"pytest", sel("pytest", "python3 -m pytest -q"), []string{"tests/test_a.py::test_x", "tests/test_a.py::TestC::test_y[1-a b]", "not a node id"},
			`python3 -m pytest -q tests/test_a.py::test_x 'tests/test_a.py::TestC::test_y[1-a b]'`},
		{"unittest", sel("unittest", "python3 -m unittest discover -v"), []string{"test_a.TestC.test_x"},
			`python3 -m unittest discover -v -k test_a.TestC.test_x`},
		{"jest", sel("jest", "npm test -- --json"), []string{"src/a.test.ts > calc > adds (1+1)", "src/b.test.js > top"},
			`npm test -- --json -t '^(?:calc adds \(1\+1\)|top)$' 'src/a\.test\.ts$' 'src/b\.test\.js$'`},
		{"jest without files", sel("jest", "npm test -- --json"), []string{"src/a.test.ts > calc > adds", "top"},
			`npm test -- --json -t '^(?:calc adds|top)$'`},
		{"vitest", sel("vitest", "npx --no-install vitest run"), []string{"a.test.ts > calc > adds"},
			`npx --no-install vitest run -t '^ ?(?:calc adds)$' a.test.ts`},
		{"mocha", sel("mocha", "npx --no-install mocha"), []string{"calc.adds", "top level"},
			`npx --no-install mocha --grep '^(?:calc[. ]adds|top level)$'`},
		{"node", Detected{sel: selector{how: "node", pre: "node --test --test-reporter=tap", post: " test/"}}, []string{"group > inner bad", "it's"},
			`node --test --test-reporter=tap --test-name-pattern='^inner bad$' --test-name-pattern='^it'\''s$' test/`},
		{"cargo", sel("cargo", "cargo test --no-fail-fast"), []string{"tests::bad", "integration #2"},
			`cargo test --no-fail-fast -- --exact tests::bad integration`},
		{"cargo binaries", sel("cargo", "cargo test --no-fail-fast"), []string{"src/lib.rs > tests::bad", "tests/api.rs > adds", "Doc-tests demo > src/lib.rs - add (line 5)", "tests/api.rs > subs #2"},
			`rc=0; cargo test --no-fail-fast --lib --test api -- --exact tests::bad adds subs || rc=$?; cargo test --no-fail-fast --doc -- add || rc=$?; exit $rc`},
		{"cargo doc-tests", sel("cargo", "cargo test --no-fail-fast"), []string{"Doc-tests demo > src/lib.rs - (line 51)", "Doc-tests demo > src/lib.rs - Calc::new (line 5)", "Doc-tests demo > src/lib.rs - Pair<A, B> (line 9)"},
			`cargo test --no-fail-fast --doc -- '51)' '9)' Calc::new`},
		{"cargo binary unknown", sel("cargo", "cargo test --no-fail-fast"), []string{"src/lib.rs > tests::bad", "cli"},
			`cargo test --no-fail-fast -- --exact tests::bad cli`},
		{"maven", sel("maven", "mvn -q -B test"), []string{"com.acme.CalcTest.subtracts", "com.acme.CalcTest.adds", "com.acme.OtherTest.x", "y(com.acme.Third)"},
			`mvn -q -B test -Dtest='CalcTest#subtracts+adds,OtherTest#x,Third#y' -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false`},
		{"gradle", sel("gradle", "./gradlew test"), []string{"com.acme.CalcTest.adds"},
			`./gradlew test --tests com.acme.CalcTest.adds`},
		{"ctest", sel("ctest", "ctest --test-dir build"), []string{"adds", "sub.tracts"},
			`ctest --test-dir build -R '^(adds|sub\.tracts)$'`},
		{"make cannot", Detected{Command: "make test"}, []string{"x"}, ""},
		{"no names", sel("pytest", "pytest"), nil, ""},
	} {
		got, ok := tc.d.selectCommand(tc.names)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%s: selectCommand = %q, %v\nwant                  %q", tc.name, got, ok, tc.want)
		}
	}
}

func TestPlanCommands(t *testing.T) {
	t.Parallel()
	mod := func(dir, path string) Detected {
		return Detected{Kind: "go", Runner: "go", Command: goCommand, Dir: dir, sel: selector{how: "go", pre: goCommand, mod: path}}
	}
	cmds := []Detected{mod("", "example.com/m"), mod("tools", "example.com/m/tools"), mod("x", "example.com/x")}

	plan, selected := planCommands(cmds, nil)
	if len(plan) != 3 || selected {
		t.Errorf("no selection: %+v, %v", plan, selected)
	}
	// Names go to the module with the longest matching path.
	plan, selected = planCommands(cmds, []string{"example.com/m/tools/lint.TestA", "example.com/m.TestB"})
	if !selected || len(plan) != 2 || plan[0].d.Dir != "" || plan[1].d.Dir != "tools" ||
		plan[0].command != `go test -json -run '^TestB$' example.com/m` || plan[1].command != `go test -json -run '^TestA$' example.com/m/tools/lint` {
		t.Errorf("plan = %+v, %v", plan, selected)
	}
	// Nothing selectable: everything runs.
	plan, selected = planCommands(cmds, []string{"TestOrphan"})
	if selected || len(plan) != 3 || plan[0].command != goCommand {
		t.Errorf("plan = %+v, %v", plan, selected)
	}
	// A runner that cannot select runs everything, and says so.
	plan, selected = planCommands([]Detected{{Command: "make test"}}, []string{"x"})
	if selected || len(plan) != 1 || plan[0].selected {
		t.Errorf("plan = %+v, %v", plan, selected)
	}
}

func TestOnlyWithExplicitCommandRunsAll(t *testing.T) {
	t.Parallel()
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{`echo "2 passed, 0 failed"`}, Only: []string{"a"}, Rerun: true})
	wantStatus(t, res, StatusPass)
	if res.Selected || res.Commands[0].Selected || res.Commands[0].Rerun != nil {
		t.Errorf("selected %v, command %+v", res.Selected, res.Commands[0])
	}
}

// Report files: a runner expected to write one that does not, or writes
// garbage, is not a pass (exit 0) and a failure (exit non-zero).
func TestReportMissingOrUnparseable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, command string
		want          Status
		reason        string
	}{
		{"missing, exit 0", `echo "5 passed, 0 failed"`, StatusNotEvaluated, "report is missing or unparseable: report missing"},
		{"unparseable, exit 0", `echo '<html>not junit</html>' > "$ULTRA_REPORT"; echo "5 passed, 0 failed"`, StatusNotEvaluated, "report unparseable"},
		{"empty, exit 0", `: > "$ULTRA_REPORT"`, StatusNotEvaluated, "is empty"},
		{"missing, exit 1", `echo "something broke"; exit 1`, StatusFail, "exited 1 and its report could not be read"},
		{"truncated, exit 0", `printf '<testsuite><testcase name="a"/><testcase name="b">' > "$ULTRA_REPORT"`, StatusNotEvaluated, "incomplete"},
		{"written, exit 0", `printf '<testsuite><testcase classname="c" name="a"/></testsuite>' > "$ULTRA_REPORT"`, StatusPass, "1 test passed"},
		{"zero tests, exit 0", `printf '<testsuite tests="0"></testsuite>' > "$ULTRA_REPORT"`, StatusNotEvaluated, "no tests ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Detected{Kind: "test", Runner: "vitest", Command: tc.command, Reason: "test", Format: "junit", Report: "$ULTRA_REPORT"}
			res, err := runCommands(context.Background(), Request{Dir: t.TempDir(), LogDir: t.TempDir(), Timeout: time.Minute}, []Detected{d}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want || !strings.Contains(res.Reason, tc.reason) {
				t.Errorf("status %s (%s), want %s with %q", res.Status, res.Reason, tc.want, tc.reason)
			}
			if c := res.Commands[0]; c.ReportOK != (tc.want == StatusPass || strings.HasPrefix(tc.name, "zero")) {
				t.Errorf("ReportOK = %v", c.ReportOK)
			}
		})
	}
}

func TestStaleReportsAreIgnored(t *testing.T) {
	t.Parallel()
	dir := project(t, map[string]string{
		"target/surefire-reports/TEST-old.xml": `<testsuite><testcase classname="a.Old" name="x"/></testsuite>`,
	})
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "target/surefire-reports/TEST-old.xml"), old, old); err != nil {
		t.Fatal(err)
	}
	d := Detected{Kind: "maven", Runner: "maven", Format: "junit", Reason: "test", Report: "target/surefire-reports/TEST-*.xml",
		Command: `printf '<testsuite><testcase classname="a.New" name="y"><failure message="boom"/></testcase></testsuite>' > target/surefire-reports/TEST-new.xml`}
	res, err := runCommands(context.Background(), Request{Dir: dir, LogDir: t.TempDir(), Timeout: time.Minute}, []Detected{d}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 0, 1, 0)
	c := res.Commands[0]
	if len(c.ReportPaths) != 1 || !strings.HasPrefix(c.ReportPaths[0], strings.TrimSuffix(c.LogPath, ".log")+"-reports/") {
		t.Errorf("report paths = %q (want a copy next to the log %s)", c.ReportPaths, c.LogPath)
	}
	if !slices.Equal(res.Failing, []string{"a.New.y"}) {
		t.Errorf("failing = %q", res.Failing)
	}

	// Only stale reports: not evaluated, even with exit 0.
	if err := os.Chtimes(filepath.Join(dir, "target/surefire-reports/TEST-new.xml"), old, old); err != nil {
		t.Fatal(err)
	}
	d.Command = "true"
	res, _ = runCommands(context.Background(), Request{Dir: dir, LogDir: t.TempDir(), Timeout: time.Minute}, []Detected{d}, time.Now())
	wantStatus(t, res, StatusNotEvaluated)
	if !strings.Contains(res.Reason, "only stale ones") {
		t.Errorf("reason = %q", res.Reason)
	}
}

// For explicit commands (and make) the format is guessed from the output:
// a guess that does not hold, or a mix of runners, goes to the text parsers.
func TestAutoFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, command  string
		passed, failed int
		format         string
		reportOK       bool
	}{
		{"tap", `printf 'TAP version 13\nok 1 - a\nnot ok 2 - b\n1..2\n'; exit 1`, 1, 1, "tap", true},
		{"go json", `printf '{"Action":"run","Package":"p","Test":"TestA"}\n{"Action":"pass","Package":"p","Test":"TestA"}\n{"Action":"pass","Package":"p"}\n'`, 1, 0, "go-json", true},
		{"junit on the output", `printf '<testsuite><testcase classname="a.B" name="c"/></testsuite>\n'`, 1, 0, "junit", true},
		{"mixed", `printf '{"Action":"run","Package":"p","Test":"TestA"}\n{"Action":"pass","Package":"p","Test":"TestA"}\n{"Action":"pass","Package":"p"}\n'; echo "==== 2 passed, 1 failed in 0.1s ===="; exit 1`, 3, 1, "text", false},
		{"text", `echo "3 passed, 1 failed"; exit 1`, 3, 1, "text", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := verify(t, Request{Dir: t.TempDir(), Commands: []string{tc.command}})
			c := res.Commands[0]
			if res.Passed != tc.passed || res.Failed != tc.failed || c.Format != tc.format || c.ReportOK != tc.reportOK {
				t.Errorf("%d passed, %d failed, format %q, report %v; want %d, %d, %q, %v",
					res.Passed, res.Failed, c.Format, c.ReportOK, tc.passed, tc.failed, tc.format, tc.reportOK)
			}
		})
	}
}
