package verify

// Parsers for the formats package report does not read: jest's --json
// output and unittest's verbose output. Like package report's parsers they
// are pure, bounded and return a report.Report.

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

// ---- jest --json ----

type jestJSON struct {
	NumTotalTests *int `json:"numTotalTests"`
	TestResults   []struct {
		Name             string `json:"name"` // absolute test file path
		Status           string `json:"status"`
		Message          string `json:"message"`
		TestExecError    any    `json:"testExecError"`
		AssertionResults []struct {
			AncestorTitles  []string `json:"ancestorTitles"`
			Title           string   `json:"title"`
			Status          string   `json:"status"`
			Duration        *float64 `json:"duration"`
			FailureMessages []string `json:"failureMessages"`
			Location        *struct {
				Line   int `json:"line"`
				Column int `json:"column"`
			} `json:"location"`
		} `json:"assertionResults"`
	} `json:"testResults"`
}

// maxJestJSON bounds the jest report read (it holds every test).
const maxJestJSON = 256 << 20

// parseJestJSON reads the report of jest --json. Test names are the test
// file (relative to root when under it), the describe blocks and the title
// joined by " > ", as vitest's are; Suite is the test file. A test file
// that failed to run (syntax error, failing import: jest's "Test suite
// failed to run") is one errored case of Kind report.KindCollection named
// after the file.
func parseJestJSON(r io.Reader, root string) (*report.Report, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxJestJSON+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJestJSON {
		return nil, errors.New("jest report too large")
	}
	var j jestJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, errors.New("jest-json: " + err.Error())
	}
	if j.NumTotalTests == nil && j.TestResults == nil {
		return nil, errors.New("jest-json: not a jest --json report (no numTotalTests, no testResults)")
	}
	rep := &report.Report{Format: "jest-json"}
	for _, f := range j.TestResults {
		file := relTo(root, f.Name)
		if len(f.AssertionResults) == 0 && (f.Status == "failed" || f.TestExecError != nil) {
			c := report.Case{Name: file, Suite: file, Status: report.Error, File: file, Kind: report.KindCollection,
				Message: clipMessage(stripANSI(f.Message))}
			if l := jestLine(f.Message, f.Name, file); l > 0 {
				c.Line = l
			}
			addCase(rep, c)
			continue
		}
		for _, a := range f.AssertionResults {
			titles := append(append([]string{file}, a.AncestorTitles...), a.Title)
			c := report.Case{Name: strings.Join(titles, jsTitleSep), Suite: file}
			switch a.Status {
			case "passed":
				c.Status = report.Passed
			case "failed":
				c.Status = report.Failed
			case "pending", "skipped", "todo", "disabled", "focused":
				c.Status = report.Skipped
			default:
				c.Status = report.Error
			}
			if a.Duration != nil && *a.Duration > 0 {
				c.Duration = time.Duration(*a.Duration * float64(time.Millisecond))
			}
			if c.Status == report.Failed || c.Status == report.Error {
				msg := stripANSI(strings.Join(a.FailureMessages, "\n"))
				c.Message = clipMessage(dropNodeModulesFrames(msg))
				c.File = file
				if l := jestLine(msg, f.Name, file); l > 0 {
					c.Line = l
				} else if a.Location != nil && a.Location.Line > 0 {
					c.Line = a.Location.Line
				}
			}
			addCase(rep, c)
		}
	}
	return rep, nil
}

// jestLine finds the line of the test file in a failure's stack.
func jestLine(msg, abs, rel string) int {
	for _, f := range []string{abs, rel} {
		if f == "" {
			continue
		}
		re, err := regexp.Compile(regexp.QuoteMeta(f) + `:(\d+)(?::\d+)?`)
		if err != nil {
			continue
		}
		if m := re.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

func dropNodeModulesFrames(msg string) string {
	var out []string
	for line := range strings.SplitSeq(msg, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "at ") && (strings.Contains(t, "node_modules") || strings.Contains(t, "(node:") || strings.Contains(t, "<anonymous>")) {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// ---- unittest -v ----

var (
	// "test_x (mod.Class.test_x) ... ok" (3.11+) or "test_x (mod.Class) ... ok";
	// a docstring's first line may sit between the name and " ... ".
	utStartRE  = regexp.MustCompile(`^(\S+) \(([\w.]+)\)(?: \[(.*)\])?`)
	utStatusRE = regexp.MustCompile(` \.\.\. (ok|FAIL|ERROR|skipped(?: .*)?|expected failure|unexpected success)\s*$`)
	utBlockRE  = regexp.MustCompile(`^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([\w.]+)\)(.*)$`)
	utRanRE    = regexp.MustCompile(`^Ran (\d+) tests? in `)
	utEndRE    = regexp.MustCompile(`^(OK|FAILED)\b(?: \((.*)\))?`)
	utFileRE   = regexp.MustCompile(`^\s*File "([^"]+)", line (\d+)`)
)

// unittestName is "mod.Class.test_x" from the method and the parenthesised
// part, which holds the class (Python < 3.11) or the full name.
func unittestName(method, paren string) string {
	if strings.HasSuffix(paren, "."+method) {
		return paren
	}
	return paren + "." + method
}

// parseUnittest reads the output of python -m unittest -v: a case per
// "name (id) ... status" line, failure tracebacks as messages (with the
// test file's line), and the "Ran N tests" / "FAILED (failures=1,
// errors=2, skipped=3)" summary. A module that fails to import
// (unittest.loader._FailedTest) is an errored case of Kind
// report.KindCollection named by the module.
func parseUnittest(r io.Reader, root string) (*report.Report, error) {
	rep := &report.Report{Format: "unittest"}
	index := map[string]int{} // name → case index
	var order []report.Case
	pending := "" // a name whose status line has not come yet
	ran := -1
	sawEnd := false
	var block *report.Case // the failure block being read
	inTrace := false       // past the rule under the block's header
	var blockMsg strings.Builder
	var blockLoc struct {
		file string
		line int
	}
	flush := func() {
		if block == nil {
			return
		}
		msg := strings.TrimSpace(blockMsg.String())
		i, ok := index[block.Name]
		if !ok {
			index[block.Name] = len(order)
			order = append(order, *block)
			i = len(order) - 1
		}
		c := &order[i]
		if c.Status != report.Error || block.Status == report.Error {
			c.Status = block.Status
		}
		if block.Kind != "" {
			c.Kind = block.Kind
		}
		if c.Message != "" {
			msg = c.Message + "\n\n" + msg
		}
		c.Message = clipMessage(msg)
		if c.File == "" && blockLoc.file != "" {
			c.File, c.Line = relTo(root, blockLoc.file), blockLoc.line
		}
		block = nil
		inTrace = false
		blockMsg.Reset()
		blockLoc.file, blockLoc.line = "", 0
	}
	record := func(name, status string) {
		st := report.Passed
		switch {
		case status == "ok" || status == "expected failure":
			st = report.Passed
		case status == "FAIL" || status == "unexpected success":
			st = report.Failed
		case status == "ERROR":
			st = report.Error
		case strings.HasPrefix(status, "skipped"):
			st = report.Skipped
		}
		if i, ok := index[name]; ok {
			if order[i].Status == report.Passed || order[i].Status == report.Skipped {
				order[i].Status = st // a subTest failure after the test's own line
			}
			return
		}
		index[name] = len(order)
		order = append(order, report.Case{Name: name, Suite: name[:max(0, strings.LastIndexByte(name, '.'))], Status: st})
	}
	failedLoad := map[string]bool{} // modules of unittest.loader._FailedTest
	err := readLinesTrimmed(r, func(line string) {
		if m := utBlockRE.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, " ") {
			flush()
			st := report.Failed
			if m[1] == "ERROR" {
				st = report.Error
			}
			block = &report.Case{Name: unittestName(m[2], m[3]), Status: st}
			block.Suite = block.Name[:max(0, strings.LastIndexByte(block.Name, '.'))]
			if strings.HasPrefix(m[3], "unittest.loader._Failed") {
				// The module could not be imported: name the test after it.
				block.Name, block.Suite = m[2], m[2]
				block.Kind = report.KindCollection
			}
			if extra := strings.TrimSpace(m[4]); extra != "" {
				blockMsg.WriteString(extra + "\n")
			}
			return
		}
		if block != nil {
			if strings.HasPrefix(line, "=====") || strings.HasPrefix(line, "-----") {
				if inTrace {
					flush()
				} else {
					inTrace = true
				}
				return
			}
			if blockMsg.Len() < 64<<10 {
				blockMsg.WriteString(line + "\n")
			}
			if m := utFileRE.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "/unittest/") && !strings.Contains(m[1], "site-packages") {
				blockLoc.file = m[1]
				blockLoc.line, _ = strconv.Atoi(m[2])
			}
			return
		}
		if m := utRanRE.FindStringSubmatch(line); m != nil {
			ran, _ = strconv.Atoi(m[1])
			return
		}
		if ran >= 0 && utEndRE.MatchString(line) {
			sawEnd = true
			return
		}
		if m := utStartRE.FindStringSubmatch(line); m != nil {
			name := unittestName(m[1], m[2])
			if strings.HasPrefix(m[2], "unittest.loader._Failed") {
				name = m[1] // a module that could not be imported
				failedLoad[name] = true
			}
			if s := utStatusRE.FindStringSubmatch(line); s != nil {
				pending = ""
				record(name, s[1])
			} else {
				pending = name
			}
			return
		}
		if pending != "" {
			if s := utStatusRE.FindStringSubmatch(line); s != nil {
				record(pending, s[1])
				pending = ""
			}
		}
	})
	flush()
	if err != nil {
		return nil, err
	}
	if len(order) == 0 && ran < 0 {
		return nil, errors.New("unittest: no test lines and no \"Ran N tests\" line")
	}
	for _, c := range order {
		if failedLoad[c.Name] && c.Status == report.Error {
			c.Kind = report.KindCollection
			c.Suite = c.Name
		}
		addCase(rep, c)
	}
	if !sawEnd && ran < 0 {
		return rep, report.ErrTruncated
	}
	return rep, nil
}

func readLinesTrimmed(r io.Reader, fn func(string)) error {
	return report.ReadLines(r, func(s string) { fn(cleanLine(strings.TrimRight(s, "\r\n"))) })
}

// addCase appends c to rep and counts it; an unknown status is an error.
func addCase(rep *report.Report, c report.Case) {
	if countCase(rep, c.Status) == report.Error {
		c.Status = report.Error
	}
	rep.Cases = append(rep.Cases, c)
}

// countCase counts a case of status s in rep, an unknown status as an
// error, and returns the status counted.
func countCase(rep *report.Report, s report.Status) report.Status {
	switch s {
	case report.Passed:
		rep.Passed++
	case report.Failed:
		rep.Failed++
	case report.Skipped:
		rep.Skipped++
	default:
		rep.Errors++
		return report.Error
	}
	return s
}

// clipMessage bounds a failure message to report.MaxMessage, keeping its
// beginning.
func clipMessage(s string) string {
	s = strings.TrimSpace(s)
	return clip(s, report.MaxMessage)
}

// relTo makes an absolute path under root relative to it (slash-separated).
func relTo(root, path string) string {
	if path == "" || !filepath.IsAbs(path) || root == "" {
		return filepath.ToSlash(path)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}
