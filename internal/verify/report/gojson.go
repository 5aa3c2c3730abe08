package report

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// GoJSON parses `go test -json` output (test2json events), one event per
// line; other lines (a build's stderr mixed in with 2>&1) are tolerated.
//
// Rules:
//   - Every test and subtest is a case, as go test -v prints a "--- PASS",
//     "--- FAIL" or "--- SKIP" line for each: the counts are those lines'.
//     A test with subtests has Kind KindParent; a subtest has Parent, the
//     name of the test that ran it. A parent that failed only through its
//     subtests has the message "2 of 5 subtests failed: a, b" and no
//     location (its failing subtests have theirs); one that failed itself
//     keeps its own output and location, with that line added. With
//     -count=N a test is one case and a failure sticks.
//   - A test that started and never finished (timeout, a panic in another
//     test, a crash) counts as failed; when it has no output of its own, its
//     message is the package's output (the timeout panic).
//   - A package that failed with no failing test (build failure, setup
//     failure, panic in init or TestMain, -timeout outside any test) is one
//     Case with Status Error named by its import path; its message is the
//     build output (compiler errors) or the package's output. A package
//     that failed to build or set up ("[build failed]", "[setup failed]")
//     has Kind KindCollection: none of its tests ran.
//   - Name is "importpath.TestName" (subtests keep "/sub"), Suite the import
//     path. File/Line come from the first "file.go:NN:" log line of the
//     test's output (t.Error, t.Fatal), else from the first stack frame in
//     the package's own module (panics, timeouts); for build failures from
//     the first compiler error. Duration comes from Elapsed.
//
// It fails (nil Report) only when there is not a single test2json event.
// A package with no final pass/fail event makes the error wrap ErrTruncated.
//
// Forged results. Only test2json's own events count: a test passed when
// the stream has a "run" and a "pass" Action for that Test in that
// package; text in "output" events (a "--- PASS: TestX" line) never counts.
// That is necessary but not sufficient, because test2json makes its events
// from the text the test binary prints, and the binary runs the project's
// code. What go 1.26 does (cmd/internal/test2json, checked by experiment):
//
//   - go test -json runs the binary with -test.v=test2json and feeds its
//     stdout and stderr (one pipe) to the converter. In that mode the
//     testing package starts each framing line it prints ("=== RUN",
//     "=== PAUSE", "=== CONT", "=== NAME", "--- PASS:", "--- FAIL:",
//     "--- SKIP:", the final "PASS"/"FAIL") with the byte 0x16 (^V). The go
//     command's "FAIL\tpkg\t0.01s" after a non-zero exit is framed too;
//     its "ok  \tpkg\t0.01s" summary is not a framing line and is plain
//     output.
//   - The converter strips the marker: in the JSON a framed line's Output
//     is the same text as an unframed one.
//   - The marker authenticates nothing. The converter starts without
//     requiring it, and after every framing line it recognises, it requires
//     the marker exactly when that line had one. So until the testing
//     package prints its first framed line (in init, or in TestMain before
//     m.Run) unframed runner lines are parsed too: a TestMain that prints
//     "=== RUN   TestFake" and "--- PASS: TestFake (0.00s)" and exits 0
//     without m.Run yields real "run" and "pass" events for TestFake and a
//     passing package, exactly like real ones. Lines starting with 0x16 are
//     parsed at any time, and a 0x16 anywhere in the output starts a new
//     line, so a binary that prints one (from init, from TestMain after
//     running the real tests with stdout discarded, from a test, even in
//     t.Log("x\x16--- PASS: …")) makes events indistinguishable from real
//     ones.
//   - Unframed runner lines printed after the testing package's first
//     framed line (TestMain after m.Run, a test printing "--- PASS: X") are
//     plain "output" events and are ignored here.
//   - A "--- PASS: X" report line alone (no "=== RUN   X") yields a "pass"
//     event without a "run" event.
//
// So the stream cannot prove that tests ran; forging is stopped before the
// run (verify.FakeResults, and the gate's rule on its findings). This
// parser still distrusts a package whose stream shows traces of a binary
// that printed runner lines itself: a test that passed without a "run"
// event, a second go test summary line ("ok  \tpkg…" or "FAIL\tpkg…": the
// go command prints one per run of a binary), or a test run or passed after
// the binary's final "PASS"/"FAIL" line. Such a package's passed tests are
// not counted; it gets one Case with Status Error saying why.
func GoJSON(r io.Reader) (*Report, error) {
	p := &goParser{pkgs: map[string]*goPkg{}, builds: map[string]*goBuild{}, stray: map[string]*goBuild{}}
	readErr := readLines(r, p.line)
	if p.events == 0 {
		if readErr != nil {
			return nil, fmt.Errorf("go-json: %w", readErr)
		}
		return nil, errNotFormat(FormatGoJSON, "no test2json events")
	}
	rep, truncated := p.finish()
	switch {
	case truncated != "":
		return rep, fmt.Errorf("go-json: %w: %s", ErrTruncated, truncated)
	case readErr != nil:
		return rep, fmt.Errorf("go-json: %w", readErr)
	}
	return rep, nil
}

type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      *string
	Elapsed     *float64
	ImportPath  string
	FailedBuild string
}

var goActions = map[string]bool{
	"start": true, "run": true, "pause": true, "cont": true, "pass": true, "bench": true,
	"fail": true, "output": true, "skip": true, "build-output": true, "build-fail": true,
}

type goTest struct {
	name    string
	state   string // run, pass, fail, skip
	ran     bool   // test2json reported a "run" event for it
	elapsed float64
	out     *msgBuf
	loc     [3]loc // by rank: log line, frame in the module, frame in a _test.go file
	prev    string // previous output line, for stack frames
}

type goPkg struct {
	path        string
	tests       map[string]*goTest
	order       []*goTest
	result      string // pass, fail, skip; empty while running
	elapsed     float64
	failedBuild string
	out         *msgBuf
	loc         [3]loc
	prev        string
	seg         goSegment // the current run of the package's binary
	forged      []string  // why its results are not trusted (bounded)
}

// goSegment is what one run of a test binary showed so far; it is reset
// by the package's start and final events (concatenated runs).
type goSegment struct {
	summaries int  // go test summary lines ("ok  \tpkg…", "FAIL\tpkg…")
	done      bool // the binary printed its final PASS or FAIL
}

type goBuild struct {
	out  msgBuf
	loc  loc
	used bool
	fail bool
}

type goParser struct {
	events     int
	pkgs       map[string]*goPkg
	order      []*goPkg
	builds     map[string]*goBuild // by ImportPath
	buildOrder []string
	stray      map[string]*goBuild // non-JSON "# pkg" blocks (older go, 2>&1)
	strayCur   *goBuild
}

const (
	goMaxBuilds = 256
	goMaxTests  = 1 << 20
	goMaxDepth  = 64 // subtest levels the leaf rule looks at
	goMaxForged = 5  // reasons kept per distrusted package
)

var (
	goLogLineRE  = regexp.MustCompile(`^\s+([\w.\-/\\]+\.go):(\d+): `)
	goFrameRE    = regexp.MustCompile(`^\t(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$`)
	goCompileRE  = regexp.MustCompile(`^(?:vet: )?(\S+\.go):(\d+)(?::\d+)?: `)
	goFrameworkR = regexp.MustCompile(`^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)\b|--- (?:PASS|FAIL|SKIP):|PASS$|FAIL$|ok  \t|testing: warning: no tests to run)`)
)

func (p *goParser) line(s string) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		var ev goEvent
		if json.Unmarshal([]byte(t), &ev) == nil && ev.Action != "" &&
			(goActions[ev.Action] || ev.Package != "" || ev.ImportPath != "") {
			p.events++
			p.event(&ev)
			return
		}
	}
	p.strayLine(cleanLine(s))
}

// strayLine keeps non-JSON text in blocks opened by "# importpath" headers,
// which is how go versions before 1.24 print build failures.
func (p *goParser) strayLine(s string) {
	if strings.HasPrefix(s, "# ") {
		path := strings.TrimSpace(strings.TrimPrefix(s, "# "))
		if i := strings.IndexByte(path, ' '); i >= 0 {
			path = path[:i]
		}
		if path == "" || len(p.stray) >= goMaxBuilds {
			p.strayCur = nil
			return
		}
		b := p.stray[path]
		if b == nil {
			b = &goBuild{}
			p.stray[path] = b
		}
		p.strayCur = b
		b.out.addLine(s)
		return
	}
	if p.strayCur == nil {
		return
	}
	p.strayCur.out.addLine(s)
	if !p.strayCur.loc.ok() {
		if m := goCompileRE.FindStringSubmatch(s); m != nil {
			p.strayCur.loc = loc{m[1], atoi(m[2])}
		}
	}
}

func (p *goParser) event(ev *goEvent) {
	out := ""
	if ev.Output != nil {
		out = *ev.Output
	}
	switch ev.Action {
	case "build-output", "build-fail":
		if ev.ImportPath == "" {
			return
		}
		b := p.builds[ev.ImportPath]
		if b == nil {
			if len(p.builds) >= goMaxBuilds {
				return
			}
			b = &goBuild{}
			p.builds[ev.ImportPath] = b
			p.buildOrder = append(p.buildOrder, ev.ImportPath)
		}
		if ev.Action == "build-fail" {
			b.fail = true
			return
		}
		line := cleanLine(strings.TrimSuffix(out, "\n"))
		b.out.addText(line)
		if !b.loc.ok() {
			if m := goCompileRE.FindStringSubmatch(line); m != nil {
				b.loc = loc{m[1], atoi(m[2])}
			}
		}
		return
	}
	pkg := p.pkgs[ev.Package]
	if pkg == nil {
		pkg = &goPkg{path: ev.Package, tests: map[string]*goTest{}}
		p.pkgs[ev.Package] = pkg
		p.order = append(p.order, pkg)
	}
	if ev.Test == "" {
		switch ev.Action {
		case "start":
			pkg.seg = goSegment{}
		case "output":
			line := cleanLine(strings.TrimSuffix(out, "\n"))
			pkg.summary(line)
			if t := strings.TrimSpace(line); t == "PASS" || t == "FAIL" {
				pkg.seg.done = true
			}
			if goFrameworkR.MatchString(line) {
				return
			}
			if pkg.out == nil {
				pkg.out = &msgBuf{}
			}
			pkg.out.addText(line)
			goLocate(&pkg.loc, &pkg.prev, pkg.path, line)
		case "pass", "fail", "skip":
			if pkg.result != "fail" { // a package's failure sticks too (concatenated runs)
				pkg.result = ev.Action
			}
			if ev.Elapsed != nil {
				pkg.elapsed = *ev.Elapsed
			}
			if ev.FailedBuild != "" {
				pkg.failedBuild = ev.FailedBuild
			}
			pkg.seg = goSegment{}
		}
		return
	}
	t := pkg.tests[ev.Test]
	if t == nil {
		if len(pkg.tests) >= goMaxTests {
			return
		}
		t = &goTest{name: ev.Test, state: "run"}
		pkg.tests[ev.Test] = t
		pkg.order = append(pkg.order, t)
	}
	switch ev.Action {
	case "run", "pass":
		if pkg.seg.done {
			pkg.distrust(fmt.Sprintf("%s reported as %s after the test binary's final PASS/FAIL line",
				clip(cleanText(ev.Test), 200), goActionWord(ev.Action)))
		}
	}
	switch ev.Action {
	case "run":
		t.ran = true
		if t.state != "fail" {
			t.state = "run"
		}
	case "output":
		line := cleanLine(strings.TrimSuffix(out, "\n"))
		pkg.summary(line)
		if goFrameworkR.MatchString(line) {
			return
		}
		if t.out == nil {
			t.out = &msgBuf{}
		}
		goLocate(&t.loc, &t.prev, pkg.path, line)
		t.out.addText(strings.TrimPrefix(line, "    ")) // the testing package's log indentation
	case "pass", "skip":
		if ev.Elapsed != nil {
			t.elapsed = *ev.Elapsed
		}
		if t.state != "fail" { // with -count=N a failure stays a failure
			t.state = ev.Action
			if ev.Action == "pass" {
				t.out = nil
				t.loc = [3]loc{}
			}
		}
	case "fail":
		if ev.Elapsed != nil {
			t.elapsed = *ev.Elapsed
		}
		t.state = "fail"
	}
}

func goActionWord(action string) string {
	if action == "run" {
		return "started"
	}
	return "passed"
}

// summary counts go test's summary lines for the package. The go command
// prints one per run of the binary, after the binary exited; a second one
// was printed by the binary itself.
func (pkg *goPkg) summary(line string) {
	if pkg.path == "" {
		return
	}
	rest, ok := strings.CutPrefix(line, "ok  \t"+pkg.path)
	if !ok {
		rest, ok = strings.CutPrefix(line, "FAIL\t"+pkg.path)
	}
	if !ok || rest != "" && rest[0] != '\t' && rest[0] != ' ' {
		return
	}
	pkg.seg.summaries++
	if pkg.seg.summaries == 2 {
		pkg.distrust(fmt.Sprintf("go test's summary line appears twice in one run (the test binary printed one): %q", clip(line, 120)))
	}
}

// distrust records why a package's results are not trusted.
func (pkg *goPkg) distrust(why string) {
	if len(pkg.forged) < goMaxForged {
		pkg.forged = append(pkg.forged, why)
	}
}

// goLocate ranks the locations found in test output: a "file.go:NN:" log
// line first, then a stack frame in the package's module, then a stack
// frame in a _test.go file.
func goLocate(locs *[3]loc, prev *string, pkgPath, line string) {
	defer func() { *prev = line }()
	if !locs[0].ok() {
		if m := goLogLineRE.FindStringSubmatch(line); m != nil {
			locs[0] = loc{m[1], atoi(m[2])}
			return
		}
	}
	m := goFrameRE.FindStringSubmatch(line)
	if m == nil {
		return
	}
	l := loc{m[1], atoi(m[2])}
	if !locs[1].ok() && goUserFunc(*prev, pkgPath) {
		locs[1] = l
	}
	if !locs[2].ok() && strings.HasSuffix(l.file, "_test.go") {
		locs[2] = l
	}
}

// goUserFunc reports whether a stack trace's function line belongs to the
// module of pkgPath (same first path element).
func goUserFunc(fn, pkgPath string) bool {
	if pkgPath == "" || fn == "" || strings.HasPrefix(fn, "created by ") {
		return false
	}
	root := pkgPath
	if i := strings.IndexByte(root, '/'); i >= 0 {
		root = root[:i]
	}
	return strings.HasPrefix(fn, root+"/") || strings.HasPrefix(fn, root+".")
}

func bestLoc(locs [3]loc) loc {
	for _, l := range locs {
		if l.ok() {
			return l
		}
	}
	return loc{}
}

func (p *goParser) finish() (*Report, string) {
	rep := &Report{Format: FormatGoJSON}
	var truncated []string
	for _, pkg := range p.order {
		prefix := ""
		if pkg.path != "" {
			prefix = pkg.path + "."
		}
		// Which tests have subtests, and which have a failing (or
		// unfinished) test below them.
		byName := make(map[string]*goTest, len(pkg.order))
		for _, t := range pkg.order {
			byName[t.name] = t
		}
		parentOf := map[*goTest]*goTest{}
		children := map[*goTest][]*goTest{}
		badBelow := map[string]bool{}
		for _, t := range pkg.order {
			bad := t.state == "fail" || t.state == "run"
			name := t.name
			for i, n := len(name)-1, 0; i > 0 && n < goMaxDepth; i-- {
				if name[i] != '/' {
					continue
				}
				n++
				if bad {
					badBelow[name[:i]] = true
				}
				if up := byName[name[:i]]; up != nil && parentOf[t] == nil {
					parentOf[t] = up
					children[up] = append(children[up], t)
				}
			}
		}
		// A passed test needs test2json's "run" event too.
		for _, t := range pkg.order {
			if t.state == "pass" && !t.ran {
				pkg.distrust(fmt.Sprintf("%s reported as passed without a run event (a bare \"--- PASS\" line)",
					clip(cleanText(t.name), 200)))
			}
		}
		failing := 0
		unfinished := 0
		notCounted := 0
		for _, t := range pkg.order {
			c := Case{Name: prefix + t.name, Suite: pkg.path, Duration: seconds(t.elapsed)}
			if up := parentOf[t]; up != nil {
				c.Parent = prefix + up.name
			}
			kids := children[t]
			if len(kids) > 0 {
				c.Kind = KindParent
			}
			switch t.state {
			case "pass":
				if len(pkg.forged) > 0 {
					notCounted++
					continue
				}
				c.Status = Passed
			case "skip":
				c.Status = Skipped
				c.Message = t.out.String()
			default: // fail, or started and never finished
				c.Status = Failed
				failing++
				l := bestLoc(t.loc)
				msg := t.out.String()
				if t.state == "run" {
					unfinished++
					if t.out.empty() && !pkg.out.empty() && !badBelow[t.name] {
						msg = pkg.out.String()
						if !l.ok() {
							l = bestLoc(pkg.loc)
						}
					}
					msg = "(test started but never finished: timeout, crash or truncated output)\n" + msg
				}
				if badBelow[t.name] {
					var bad []string
					for _, k := range kids {
						if k.state == "fail" || k.state == "run" {
							bad = append(bad, strings.TrimPrefix(k.name, t.name+"/"))
						}
					}
					note := SubtestSummary(bad, len(kids))
					if strings.TrimSpace(msg) == "" {
						msg = note
					} else {
						msg = note + "\n" + msg
					}
				}
				c.File, c.Line = l.file, l.line
				c.Message = clip(strings.TrimRight(msg, "\n"), MaxMessage)
			}
			rep.add(c)
		}
		if pkg.result == "" && (pkg.path != "" || unfinished > 0) {
			truncated = append(truncated, "package "+goPkgLabel(pkg.path)+" has no result")
		}
		if len(pkg.forged) > 0 {
			rep.add(goForgedCase(pkg, notCounted))
		}
		if pkg.result == "fail" && failing == 0 {
			rep.add(p.pkgError(pkg))
		}
	}
	// Builds that failed with no package reporting them (a stream cut
	// after the build): one error each.
	for _, ip := range p.buildOrder {
		b := p.builds[ip]
		if b.used || !b.fail {
			continue
		}
		name := ip
		if i := strings.Index(name, " ["); i > 0 {
			name = name[:i]
		}
		rep.add(Case{Name: name, Suite: name, Status: Error, File: b.loc.file, Line: b.loc.line, Message: b.out.String(), Kind: KindCollection})
	}
	uniquify(rep.Cases)
	return rep, strings.Join(truncated, "; ")
}

// goForgedCase is the error of a package whose results are not trusted.
func goForgedCase(pkg *goPkg, notCounted int) Case {
	c := Case{Name: pkg.path, Suite: pkg.path, Status: Error, Duration: seconds(pkg.elapsed)}
	if c.Name == "" {
		c.Name = "(package)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "results not trusted: the test binary printed lines imitating go test's own output, "+
		"which forges test events (passed tests not counted: %d):", notCounted)
	for _, why := range pkg.forged {
		b.WriteString("\n- " + why)
	}
	c.Message = clip(b.String(), MaxMessage)
	return c
}

func goPkgLabel(path string) string {
	if path == "" {
		return `""`
	}
	return path
}

// pkgError is the case of a package that failed without a failing test.
func (p *goParser) pkgError(pkg *goPkg) Case {
	c := Case{Name: pkg.path, Suite: pkg.path, Status: Error, Duration: seconds(pkg.elapsed)}
	if c.Name == "" {
		c.Name = "(package)"
	}
	var b *goBuild
	if pkg.failedBuild != "" {
		b = p.builds[pkg.failedBuild]
	}
	if b == nil {
		b = p.stray[pkg.path]
	}
	if b != nil {
		if b.used {
			c.Message = "(same build failure as above: " + pkg.failedBuild + ")"
		} else {
			b.used = true
			c.Message = b.out.String()
		}
		c.File, c.Line = b.loc.file, b.loc.line
	}
	if c.Message == "" || b != nil && b.out.empty() {
		c.Message = pkg.out.String()
	}
	if c.File == "" {
		l := bestLoc(pkg.loc)
		c.File, c.Line = l.file, l.line
	}
	if c.Message == "" {
		c.Message = "package failed with no failing test"
	}
	if pkg.failedBuild != "" || strings.Contains(pkg.out.String(), "[setup failed]") {
		c.Kind = KindCollection // it did not build: none of its tests ran
	}
	return c
}

// SubtestSummary is the message of a parent test that failed through its
// subtests: "2 of 5 subtests failed: a, b" (at most 10 names).
func SubtestSummary(failed []string, total int) string {
	total = max(total, len(failed))
	names := failed
	more := ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(", … (%d more)", len(failed)-10)
	}
	word := "subtests"
	if total == 1 {
		word = "subtest"
	}
	return fmt.Sprintf("%d of %d %s failed: %s%s", len(failed), total, word, strings.Join(names, ", "), more)
}
