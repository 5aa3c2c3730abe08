package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// checkInvariants holds for every report any parser returns.
func checkInvariants(t testing.TB, r *Report) {
	t.Helper()
	if r == nil {
		return
	}
	var n [4]int
	names := map[string]bool{}
	for i, c := range r.Cases {
		switch c.Status {
		case Passed:
			n[0]++
		case Failed:
			n[1]++
		case Skipped:
			n[2]++
		case Error:
			n[3]++
		default:
			t.Fatalf("case %d %q: bad status %q", i, c.Name, c.Status)
		}
		if c.Name == "" {
			t.Fatalf("case %d: empty name", i)
		}
		if names[c.Name] {
			t.Fatalf("case %d: duplicate name %q", i, c.Name)
		}
		names[c.Name] = true
		if len(c.Message) > MaxMessage {
			t.Fatalf("case %q: message is %d bytes > %d", c.Name, len(c.Message), MaxMessage)
		}
		if !utf8.ValidString(c.Name) {
			t.Fatalf("case %q: name is not UTF-8", c.Name)
		}
		if c.Duration < 0 || c.Line < 0 {
			t.Fatalf("case %q: negative duration or line", c.Name)
		}
		switch {
		case c.Kind != "" && c.Kind != KindParent && c.Kind != KindCollection:
			t.Fatalf("case %q: kind %q", c.Name, c.Kind)
		case c.Kind == KindCollection && c.Status != Error:
			t.Fatalf("case %q: a collection error with status %s", c.Name, c.Status)
		case c.Parent == c.Name && c.Name != "":
			t.Fatalf("case %q is its own parent", c.Name)
		}
	}
	if n != [4]int{r.Passed, r.Failed, r.Skipped, r.Errors} {
		t.Fatalf("counts %d/%d/%d/%d (passed/failed/skipped/errors) but cases say %v", r.Passed, r.Failed, r.Skipped, r.Errors, n)
	}
	if r.Executed()+r.Skipped != len(r.Cases) {
		t.Fatalf("Executed()+Skipped = %d, %d cases", r.Executed()+r.Skipped, len(r.Cases))
	}
}

// want describes one expected case; empty fields are not checked.
type want struct {
	name   string
	status Status
	suite  string
	file   string
	line   int
	msg    []string // substrings of Message
	dur    time.Duration
	kind   string // Kind; "-" for none
	parent string // Parent; "-" for none
}

type parserCase struct {
	name      string
	parse     func(io.Reader) (*Report, error)
	input     string
	counts    [4]int // passed, failed, skipped, errors
	truncated bool
	cases     []want
	order     []string // all case names, in order, when given
}

func runParserCases(t *testing.T, tests []parserCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.parse(strings.NewReader(tc.input))
			if tc.truncated {
				if !errors.Is(err, ErrTruncated) {
					t.Fatalf("err = %v, want ErrTruncated", err)
				}
			} else if err != nil {
				t.Fatalf("err = %v", err)
			}
			if r == nil {
				t.Fatal("nil report")
			}
			checkInvariants(t, r)
			if got := [4]int{r.Passed, r.Failed, r.Skipped, r.Errors}; got != tc.counts {
				t.Errorf("counts = %v, want %v\n%s", got, tc.counts, dump(r))
			}
			if tc.order != nil {
				var names []string
				for _, c := range r.Cases {
					names = append(names, c.Name)
				}
				if strings.Join(names, "\n") != strings.Join(tc.order, "\n") {
					t.Errorf("names:\n  %s\nwant:\n  %s", strings.Join(names, "\n  "), strings.Join(tc.order, "\n  "))
				}
			}
			for _, w := range tc.cases {
				c, ok := find(r, w.name)
				if !ok {
					t.Errorf("no case %q in\n%s", w.name, dump(r))
					continue
				}
				if w.status != "" && c.Status != w.status {
					t.Errorf("%s: status %s, want %s", w.name, c.Status, w.status)
				}
				if w.suite != "" && c.Suite != w.suite {
					t.Errorf("%s: suite %q, want %q", w.name, c.Suite, w.suite)
				}
				if w.file != "" && (c.File != w.file || c.Line != w.line) {
					t.Errorf("%s: at %s:%d, want %s:%d", w.name, c.File, c.Line, w.file, w.line)
				}
				if w.kind != "" && c.Kind != strings.TrimPrefix(w.kind, "-") {
					t.Errorf("%s: kind %q, want %q", w.name, c.Kind, strings.TrimPrefix(w.kind, "-"))
				}
				if w.parent != "" && c.Parent != strings.TrimPrefix(w.parent, "-") {
					t.Errorf("%s: parent %q, want %q", w.name, c.Parent, strings.TrimPrefix(w.parent, "-"))
				}
				if w.dur != 0 && c.Duration != w.dur {
					t.Errorf("%s: duration %v, want %v", w.name, c.Duration, w.dur)
				}
				for _, m := range w.msg {
					if !strings.Contains(c.Message, m) {
						t.Errorf("%s: message lacks %q:\n%s", w.name, m, c.Message)
					}
				}
			}
		})
	}
}

func find(r *Report, name string) (Case, bool) {
	for _, c := range r.Cases {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

func dump(r *Report) string {
	var b strings.Builder
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "  %-7s %q suite=%q %s:%d %v\n", c.Status, c.Name, c.Suite, c.File, c.Line, c.Duration)
	}
	return b.String()
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{goSubtests, "go-json"},
		{goBuildFailed, "go-json"},
		{goOldBuildFailed, "go-json"},
		{goSubtests[:150], "go-json"}, // cut mid-line
		{pytestXunit1, "junit"},
		{"\xef\xbb\xbf" + surefireFoo, "junit"},
		{ctestJUnit, "junit"},
		{"<!-- generated -->\n<testsuites>", "junit"},
		{nodeTAP, "tap"},
		{batsTAP, "tap"},
		{proveTAP, "tap"},
		{tapeTAP, "tap"},
		{cargoTest, "cargo"},
		{cargoCompileError, "cargo"},
		{nextestOld, "cargo"},
		{nextestNew, "cargo"},
		{"", ""},
		{"--- FAIL: TestX (0.00s)\nFAIL\texample.com/x\t0.1s\n", ""},
		{"<html><body>testsuite</body></html>", ""},
		{"===== 3 passed in 0.12s =====\n", ""},
		{`{"a":1}` + "\n", ""},
	} {
		if got := Detect([]byte(tc.in)); got != tc.want {
			t.Errorf("Detect(%.60q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFailingAndMerge(t *testing.T) {
	g, _ := GoJSON(strings.NewReader(goSubtests + goBuildFailed))
	j, _ := JUnit(strings.NewReader(surefireFoo))
	var names []string
	for _, c := range g.Failing() {
		names = append(names, c.Name)
	}
	want := "example.com/demo/calc.TestTable example.com/demo/calc.TestTable/neg example.com/demo/calc.TestParentFails example.com/demo/broken"
	if strings.Join(names, " ") != want {
		t.Errorf("Failing() = %v", names)
	}
	m := Merge(g, nil, j, j)
	checkInvariantsCounts(t, m)
	if m.Format != "go-json+junit" || len(m.Cases) != len(g.Cases)+2*len(j.Cases) ||
		m.Passed != g.Passed+2*j.Passed || m.Errors != g.Errors+2*j.Errors {
		t.Errorf("Merge = %+v", m)
	}
	if got := Merge(); got == nil || got.Format != "" || len(got.Cases) != 0 {
		t.Errorf("Merge() = %+v", got)
	}
	var nilReport *Report
	if nilReport.Failing() != nil {
		t.Error("nil Failing")
	}
}

// checkInvariantsCounts is checkInvariants without the unique-name rule
// (Merge keeps names as they are).
func checkInvariantsCounts(t *testing.T, r *Report) {
	t.Helper()
	if r.Executed()+r.Skipped != len(r.Cases) {
		t.Fatalf("Executed()+Skipped = %d, %d cases", r.Executed()+r.Skipped, len(r.Cases))
	}
}

func TestMessageBound(t *testing.T) {
	var m msgBuf
	m.addLine("first line")
	for i := 0; i < 10000; i++ {
		m.addLine(strings.Repeat("x", 70))
	}
	m.addLine("panic: the thing that matters")
	m.addLine("étendue " + strings.Repeat("é", 3000))
	s := m.String()
	if len(s) > MaxMessage || !utf8.ValidString(s) {
		t.Fatalf("len %d, valid %v", len(s), utf8.ValidString(s))
	}
	for _, want := range []string{"first line", "panic: the thing that matters", "bytes omitted"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q", want)
		}
	}
	// One enormous line.
	var one msgBuf
	one.addText(strings.Repeat("ü", 10000))
	s = one.String()
	if len(s) > MaxMessage || !utf8.ValidString(s) {
		t.Fatalf("len %d, valid %v", len(s), utf8.ValidString(s))
	}
}

// TestLargeInputs guards against quadratic behaviour: each parser reads
// tens of thousands of tests quickly.
func TestLargeInputs(t *testing.T) {
	const n = 30000
	var g, j, tp, c strings.Builder
	j.WriteString("<testsuites><testsuite name=\"big\">\n")
	c.WriteString("running 30000 tests\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&g, `{"Action":"run","Package":"example.com/big","Test":"TestBig/case_%d"}`+"\n", i)
		fmt.Fprintf(&g, `{"Action":"pass","Package":"example.com/big","Test":"TestBig/case_%d","Elapsed":0}`+"\n", i)
		fmt.Fprintf(&j, "<testcase classname=\"a.B\" name=\"same\"/>\n")
		fmt.Fprintf(&tp, "%sok %d - same\n", strings.Repeat("    ", i%40), i)
		fmt.Fprintf(&c, "test m::t%d ... ok\n", i)
	}
	g.WriteString(`{"Action":"pass","Package":"example.com/big","Test":"TestBig"}` + "\n" + `{"Action":"pass","Package":"example.com/big"}` + "\n")
	gs := `{"Action":"run","Package":"example.com/big","Test":"TestBig"}` + "\n" + g.String()
	j.WriteString("</testsuite></testsuites>\n")
	c.WriteString("\ntest result: ok. 30000 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s\n")
	for _, tc := range []struct {
		name  string
		parse func(io.Reader) (*Report, error)
		in    string
		cases int
	}{
		{"go", GoJSON, gs, n + 1},
		{"junit", JUnit, j.String(), n},
		{"tap", TAP, tp.String(), 0},
		{"cargo", Cargo, c.String(), n},
	} {
		start := time.Now()
		r, _ := tc.parse(strings.NewReader(tc.in))
		if r == nil || tc.cases > 0 && len(r.Cases) != tc.cases {
			t.Errorf("%s: got %v", tc.name, r)
			continue
		}
		checkInvariants(t, r)
		if d := time.Since(start); d > time.Minute { // generous: a quadratic parser takes hours
			t.Errorf("%s: took %v", tc.name, d)
		}
	}
}

// failingReader returns its text, then an I/O error.
type failingReader struct{ r io.Reader }

var errDisk = errors.New("disk on fire")

func (f failingReader) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err == io.EOF {
		return n, errDisk
	}
	return n, err
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(io.Reader) (*Report, error)
		in    string
	}{
		{"go", GoJSON, goSubtests},
		{"junit", JUnit, surefireFoo[:1500]},
		{"tap", TAP, nodeTAP},
		{"cargo", Cargo, cargoTest},
	} {
		r, err := tc.parse(failingReader{strings.NewReader(tc.in)})
		if !errors.Is(err, errDisk) || r == nil || len(r.Cases) == 0 {
			t.Errorf("%s: %v, %v", tc.name, r, err)
		}
		checkInvariants(t, r)
		r, err = tc.parse(failingReader{strings.NewReader("")})
		if !errors.Is(err, errDisk) || errors.Is(err, ErrNotFormat) || r != nil {
			t.Errorf("%s, nothing read: %v, %v", tc.name, r, err)
		}
	}
}

func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[31mred\x1b[0m":             "red",
		"\x1b]0;title\x07text":           "text",
		"pytest #x1B[1m#x1B[31mE#x1B[0m": "pytest E",
		"lone \x1b":                      "lone ",
	} {
		if got := stripANSI(in); got != want {
			t.Errorf("stripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}
