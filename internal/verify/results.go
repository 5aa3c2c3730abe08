package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

// readResults fills cr's counts, tests, failing names and excerpt from the
// command's report (preferred) or its output (the text parsers). root is
// the project root, shown where the command saw it (the absolute paths
// it reports lie there), reportPath the file the command was asked to write,
// keepDir where report files found in the project are copied, start when
// the command started (older report files are stale).
func readResults(cr *CommandResult, d Detected, root, shown, reportPath, keepDir string, start time.Time, output string) {
	// The text parsers always run: for the runner's own "no tests" line,
	// the excerpt, and the counts when there is no report.
	var p parsed
	if lf, err := openResult(cr.LogPath); err == nil {
		p, err = parseOutput(lf)
		lf.Close()
		if err != nil {
			p = parseString(output)
		}
	} else {
		p = parseString(output)
	}
	cr.excerpt = p.Excerpt
	cr.noTests = p.NoTests
	cr.OutputLines = p.Lines
	cr.Cause = p.Cause
	if n := commandNote(d, cr.Command); n != "" && !strings.Contains(cr.Source, n) {
		cr.Source = strings.TrimSpace(cr.Source + "; " + n)
	}

	rep, paths, missed := readReport(d, root, shown, cr.LogPath, reportPath, keepDir, start)
	if rep == nil && missed != "" && d.Runner == "mocha" {
		// mocha stops before writing its report when a test file does
		// not load: that file is the result.
		if rep = mochaLoadFailure(output, cr.LogPath, filepath.Join(shown, filepath.FromSlash(d.Dir))); rep != nil {
			missed = "mocha stopped before writing its report: a test file did not load"
		}
	}
	if d.Format == "auto" && (missed != "" || (rep != nil && mixedOutput(rep.Format, p.Formats))) {
		// The format was only guessed from the output: when it does not
		// hold, or other runners' results are in the output too (a
		// Makefile running several suites), the text parsers count all.
		rep, paths, missed = nil, nil, ""
	}
	cr.ReportPaths = paths
	cr.reportMissed = missed
	cr.ReportMissing = missed
	if rep == nil {
		cr.Passed, cr.Failed, cr.Skipped, cr.Errors = p.Passed, p.Failed, p.Skipped, p.Errors
		cr.Failing = p.Failing
		cr.Formats = p.Formats
		if len(p.Formats) > 0 {
			cr.Format = "text"
		}
		return
	}
	normalise(rep, d, shown)
	cr.ReportOK = missed == ""
	cr.Format = baseFormat(rep.Format, d.Format)
	cr.Formats = []string{cr.Format}
	cr.Tests = rep.Cases
	// The same split everywhere: Failed are failed tests, Errors the
	// tests, files, modules or packages that could not run.
	cr.Passed, cr.Failed, cr.Skipped, cr.Errors = rep.Passed, rep.Failed, rep.Skipped, rep.Errors
	failing := rep.Failing()
	names := newNameSet(MaxFailing)
	for _, c := range failing {
		names.add(failingName(c))
	}
	cr.Failing = names.list
	if ex := casesExcerpt(failing, MaxExcerpt); ex != "" {
		cr.excerpt = ex
	}
}

// noFailFastNote says why cargo runs with --no-fail-fast.
const noFailFastNote = "--no-fail-fast: every test binary runs even after one fails " +
	"(without it cargo stops at the first failing binary, and the tests of the later ones are neither run nor counted)"

// commandNote is what a person needs to know to read a command's counts,
// added to its Source: for cargo, why --no-fail-fast.
func commandNote(d Detected, command string) string {
	if (d.Runner == "cargo" || d.Runner == "nextest") && strings.Contains(command, "--no-fail-fast") {
		return noFailFastNote
	}
	return ""
}

// note is what a person needs to know to read the command's counts (the
// note commandNote added to its Source), "" when nothing.
func (c *CommandResult) note() string {
	if strings.Contains(c.Source, noFailFastNote) {
		return noFailFastNote
	}
	return ""
}

// textFamilies are the text parsers' names for the output of each
// machine-readable format.
var textFamilies = map[string][]string{
	report.FormatGoJSON: {"go test -json", "go test"},
	report.FormatTAP:    {"TAP", "TAP summary", "node --test"},
	report.FormatCargo:  {"cargo"},
}

// mixedOutput reports whether the text parsers found results of another
// kind than format's in the output.
func mixedOutput(format string, textFormats []string) bool {
	for _, f := range textFormats {
		if !slices.Contains(textFamilies[format], f) {
			return true
		}
	}
	return false
}

func baseFormat(got, want string) string {
	if got == "" {
		return want
	}
	return got
}

// failingName is "name (file:line)", or the name when the location is
// unknown or already in it; a parent test that failed only through its
// subtests is "name (2 of 5 subtests failed: a, b)".
func failingName(c report.Case) string {
	loc := location(c)
	if loc == "" && c.Kind == report.KindParent && subtestNoteRE.MatchString(c.Message) {
		return c.Name + " (" + strings.SplitN(c.Message, "\n", 2)[0] + ")"
	}
	if loc == "" || strings.Contains(c.Name, loc) {
		return c.Name
	}
	return c.Name + " (" + loc + ")"
}

var subtestNoteRE = regexp.MustCompile(`^\d+ of \d+ subtests? failed: `)

// readReport reads the report d's runner was asked for. rep is nil when
// there is none (missed says why, when one was expected); a report read
// only in part comes with missed set too.
func readReport(d Detected, root, shown, logPath, reportPath, keepDir string, start time.Time) (rep *report.Report, paths []string, missed string) {
	format := d.Format
	if format == "auto" {
		head, _ := readHead(logPath, 256<<10)
		format = report.Detect(head)
		switch format {
		case report.FormatGoJSON, report.FormatTAP, report.FormatCargo:
		case report.FormatJUnit:
			format = "junit-output" // XML on the output itself
		default:
			return nil, nil, "" // no machine-readable format: text parsers
		}
	}
	var err error
	switch format {
	case "go-json", "tap", "cargo", "unittest", "junit-output":
		f, ferr := openResult(logPath)
		if ferr != nil {
			return nil, nil, "output log unreadable: " + ferr.Error()
		}
		defer f.Close()
		switch format {
		case "go-json":
			rep, err = report.GoJSON(f)
		case "tap":
			rep, err = report.TAP(f)
		case "cargo":
			rep, err = report.Cargo(f)
		case "unittest":
			rep, err = parseUnittest(f, filepath.Join(shown, filepath.FromSlash(d.Dir)))
		case "junit-output":
			rep, err = report.JUnit(f)
		}
		if rep == nil && err == nil {
			err = errors.New("no results")
		}
	case "junit", "jest-json":
		paths, missed = reportFiles(d, root, reportPath, keepDir, start)
		if missed != "" {
			return nil, nil, missed
		}
		var files []*os.File
		for _, p := range paths {
			f, ferr := openResult(p)
			if ferr != nil {
				return nil, paths, "report unreadable: " + ferr.Error()
			}
			defer f.Close()
			files = append(files, f)
		}
		if format == "jest-json" {
			rep, err = parseJestJSON(files[0], filepath.Join(shown, filepath.FromSlash(d.Dir)))
		} else {
			readers := make([]io.Reader, len(files))
			for i, f := range files {
				readers[i] = f
			}
			rep, err = report.JUnitFiles(readers...)
		}
	default:
		return nil, nil, ""
	}
	switch {
	case rep == nil:
		return nil, paths, fmt.Sprintf("%s report unparseable: %v", format, err)
	case err != nil:
		return rep, paths, fmt.Sprintf("%s report incomplete: %v", format, err)
	}
	return rep, paths, ""
}

func readHead(path string, n int) ([]byte, error) {
	f, err := openResult(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return buf[:m], err
}

// reportFiles finds the report files of a run: the ULTRA_REPORT file, or
// the files matching d.Report's globs (in the command's directory) written
// since start, copied to keepDir so they are kept with the log.
func reportFiles(d Detected, root, reportPath, keepDir string, start time.Time) ([]string, string) {
	if d.Report == "$ULTRA_REPORT" || d.Report == "" {
		st, err := os.Lstat(reportPath)
		if err != nil || !st.Mode().IsRegular() {
			return nil, "report missing: the runner wrote no " + filepath.Base(reportPath)
		}
		if st.Size() == 0 {
			return nil, "report unparseable: " + filepath.Base(reportPath) + " is empty"
		}
		return []string{reportPath}, ""
	}
	dir := filepath.Join(root, filepath.FromSlash(d.Dir))
	var fresh, all []string
	for _, g := range strings.Fields(d.Report) {
		matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(g)))
		for _, m := range matches {
			st, err := os.Lstat(m)
			if err != nil || !st.Mode().IsRegular() || !inside(dir, m) {
				continue
			}
			all = append(all, m)
			// A second of slack for file systems with coarse times.
			if !st.ModTime().Before(start.Add(-time.Second)) {
				fresh = append(fresh, m)
			}
		}
	}
	use := fresh
	if len(use) == 0 && d.Runner == "gradle" {
		// Gradle does not run an up-to-date test task again: its
		// reports are those of the last run, made from the same inputs.
		use = all
	}
	if len(use) == 0 {
		what := "report missing: no " + d.Report
		if len(all) > 0 {
			what += " written by this run (only stale ones)"
		}
		return nil, what
	}
	if err := os.MkdirAll(keepDir, 0o755); err != nil {
		return use, ""
	}
	kept := make([]string, 0, len(use))
	for i, src := range use {
		rel, _ := filepath.Rel(dir, src)
		dst := filepath.Join(keepDir, fmt.Sprintf("%03d-%s", i+1, slug(rel))+filepath.Ext(src))
		if copyFile(src, dst) == nil {
			kept = append(kept, dst)
		} else {
			kept = append(kept, src)
		}
	}
	return kept, ""
}

func copyFile(src, dst string) error {
	in, err := openResult(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_ = os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

var emptyTitleRE = regexp.MustCompile(`(?:\s*>)+\s*>\s*`)

// normalise makes the report's cases uniform across runners: file paths
// relative to the project root, and names a runner can select again.
func normalise(rep *report.Report, d Detected, root string) {
	for i := range rep.Cases {
		c := &rep.Cases[i]
		switch {
		case c.File == "":
		case filepath.IsAbs(c.File):
			c.File = relTo(root, c.File)
		case d.Runner == "go" && !strings.Contains(c.File, "/"):
			// go test prints the base name of the test's file, in its
			// package's directory.
			c.File = path.Join(d.Dir, goPackageDir(c.Suite, d.sel.mod), c.File)
		default:
			// Relative to where the command ran ("./calc_test.go").
			c.File = path.Join(d.Dir, c.File)
		}
		if d.Runner == "go" && isBad(c.Status) {
			if f, l, ok := goKeyLocation(c.Message); ok {
				c.File, c.Line = path.Join(d.Dir, goPackageDir(c.Suite, d.sel.mod), f), l
			}
		}
		if strings.Contains(c.File, "node_modules/") {
			c.File, c.Line = "", 0 // a dependency's frame is never where a test failed
		}
		if d.Runner == "jest" {
			// jest-junit's title template leaves an empty part for tests
			// outside any describe block.
			c.Name = strings.TrimSpace(strings.TrimPrefix(emptyTitleRE.ReplaceAllString(c.Name, " > "), "> "))
			if f, ok := strings.CutPrefix(c.Name, jestSuiteFailed+" > "); ok {
				c.Name, c.Suite = f, f
				if c.File == "" {
					c.File = baseName(f)
				}
			}
			if c.Status == report.Error && c.Name == c.Suite && c.Name == c.File {
				c.Kind = report.KindCollection // jest-junit's suite error: the file did not run
			}
		}
		if c.Kind == report.KindCollection && filepath.IsAbs(c.Name) {
			// A test file's path (node --test): its id is relative.
			rel := relTo(filepath.Join(root, filepath.FromSlash(d.Dir)), c.Name)
			if !filepath.IsAbs(rel) {
				rel = path.Join(d.Dir, rel)
			}
			if c.Suite == c.Name {
				c.Suite = rel
			}
			c.Name = rel
		}
	}
	if d.Runner == "jest" {
		// jest-junit reports a test file that failed to run twice (an
		// error, then a failure of the same name): keep the error.
		errored := map[string]bool{}
		kept := rep.Cases[:0]
		for _, c := range rep.Cases {
			if b := baseName(c.Name); b != c.Name && errored[b] {
				continue
			}
			if c.Status == report.Error {
				errored[c.Name] = true
			}
			kept = append(kept, c)
		}
		if len(kept) != len(rep.Cases) {
			rep.Cases = kept
			recount(rep)
		}
	}
}

// jestSuiteFailed is jest's heading of a test file that could not run.
const jestSuiteFailed = "Test suite failed to run"

// recount sets rep's counts from its cases.
func recount(rep *report.Report) {
	rep.Passed, rep.Failed, rep.Skipped, rep.Errors = 0, 0, 0, 0
	for _, c := range rep.Cases {
		countCase(rep, c.Status)
	}
}

// goPackageDir is the directory of package pkg in module mod, relative to
// the module's root.
func goPackageDir(pkg, mod string) string {
	if mod == "" || !goPathHasPrefix(pkg, mod) {
		return ""
	}
	return strings.TrimPrefix(strings.TrimPrefix(pkg, mod), "/")
}

// casesExcerpt renders failing cases as "--- FAIL: name (file:line)" and
// their messages, within budget bytes.
func casesExcerpt(failing []report.Case, budget int) string {
	items := make([]excerptItem, len(failing))
	for i, c := range failing {
		header := "--- FAIL: " + c.Name
		if c.Status == report.Error {
			header = "--- ERROR: " + c.Name
		}
		if loc := location(c); loc != "" {
			header += " (" + loc + ")"
		}
		items[i] = excerptItem{header: header, body: c.Message}
	}
	return strings.TrimRight(writeExcerpt(items, budget, 600), "\n")
}

// excerptItem is one failure in an excerpt: a header line and its output.
type excerptItem struct{ header, body string }

// writeExcerpt renders failures within budget bytes: the first one's
// output gets up to 1500 bytes, the others up to later bytes each, and
// when the room runs out a line says how many more are in the log.
func writeExcerpt(items []excerptItem, budget, later int) string {
	var b strings.Builder
	for i, it := range items {
		header := it.header + "\n"
		room := budget - b.Len() - len(header)
		if room < 120 {
			if left := len(items) - i; left > 0 {
				b.WriteString(clip(fmt.Sprintf("… %d more failures in the log\n", left), budget-b.Len()))
			}
			break
		}
		b.WriteString(header)
		out := strings.TrimRight(it.body, "\n ")
		if out == "" {
			continue
		}
		limit := min(room-1, 1500)
		if i > 0 {
			limit = min(room-1, later)
		}
		b.WriteString(clip(out, limit))
		b.WriteByte('\n')
	}
	return b.String()
}

// keyLine is report.KeyLine: the line of a failure message worth showing
// next to the test's name.
func keyLine(msg string) string { return report.KeyLine(msg) }

// goKeyLocation is the "file.go:12" a Go test's key line was logged at
// (t.Errorf, t.Fatalf): where it failed, rather than its first log line.
func goKeyLocation(msg string) (string, int, bool) {
	lines, pick := report.PickKeyLine(msg)
	if pick < 0 {
		return "", 0, false
	}
	m := goLogLocRE.FindStringSubmatch(lines[pick])
	if m == nil {
		return "", 0, false
	}
	n, _ := strconv.Atoi(m[2])
	return m[1], n, true
}

var goLogLocRE = regexp.MustCompile(`^([\w.-]+\.go):(\d+): `)

// openResult opens a log or report the tests may have tampered with:
// never through a symlink (which could make ultra, outside the sandbox,
// read a file the tests cannot), only a regular file.
func openResult(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	return f, nil
}

// inside reports whether p, symlinks resolved, lies in dir (resolved).
func inside(dir, p string) bool {
	rd, err1 := filepath.EvalSymlinks(dir)
	rp, err2 := filepath.EvalSymlinks(p)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(rd, rp)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

var (
	mochaExceptionRE = regexp.MustCompile(`^\s*Exception during run: (.*)$`)
	mochaFileLineRE  = regexp.MustCompile(`^(\S+\.[cm]?[jt]sx?):(\d+)$`)
	mochaStackRE     = regexp.MustCompile(`^\s*- (\S+\.[cm]?[jt]sx?)\s*$`)
	mochaFrameRE     = regexp.MustCompile(`\(?((?:/|[A-Za-z]:\\)\S+\.[cm]?[jt]sx?):(\d+):\d+\)?$`)
)

// mochaLoadFailure reads mocha's "Exception during run: …" (a test file
// that does not load: a syntax error, a missing module), after which
// mocha writes no report, as one collection error named by the test file
// (relative to dir). It is nil when the output says no such thing.
func mochaLoadFailure(output, logPath, dir string) *report.Report {
	if head, err := readHead(logPath, 256<<10); err == nil && len(head) > 0 {
		output = string(head)
	}
	var msg []string
	file, line := "", 0
	inStack := false
	for l := range strings.SplitSeq(output, "\n") {
		l = strings.TrimRight(cleanLine(l), " ")
		if len(msg) == 0 {
			m := mochaExceptionRE.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			msg = append(msg, strings.TrimSpace(m[1]))
			if fm := mochaFileLineRE.FindStringSubmatch(strings.TrimSpace(m[1])); fm != nil {
				file, line = fm[1], atoiSafe(fm[2])
			}
			continue
		}
		if len(msg) < 40 {
			msg = append(msg, l)
		}
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "Require stack:"):
			inStack = true
		case inStack && file == "":
			if m := mochaStackRE.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], "node_modules") {
				file = m[1]
			}
			inStack = false
		case file == "" && strings.Contains(l, " at "):
			if m := mochaFrameRE.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], "node_modules") && inside(dir, m[1]) {
				file, line = m[1], atoiSafe(m[2])
			}
		}
	}
	if len(msg) == 0 {
		return nil
	}
	name := "(mocha)"
	if file != "" {
		name = relTo(dir, file)
	}
	rep := &report.Report{Format: "junit"}
	addCase(rep, report.Case{Name: name, Suite: name, Status: report.Error, Kind: report.KindCollection,
		File: relTo(dir, file), Line: line, Message: clipMessage(strings.Join(msg, "\n"))})
	return rep
}

func atoiSafe(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// countsText renders counts the one way every summary shows them: "3
// passed, 1 failed, 2 errors, 1 skipped" (errors only when there are
// some). Failed never includes errors.
func countsText(passed, failed, errors, skipped int) string {
	s := fmt.Sprintf("%d passed, %d failed", passed, failed)
	switch {
	case errors == 1:
		s += ", 1 error"
	case errors > 1:
		s += fmt.Sprintf(", %d errors", errors)
	}
	return s + fmt.Sprintf(", %d skipped", skipped)
}

// collectionErrors counts the tests of res that are collection errors
// (report.KindCollection).
func collectionErrors(res *Result) int {
	return len(report.CollectionErrors(res.Tests))
}

// badReason says, for Result.Reason, what failed and what could not run,
// with the same numbers as the counts: "1 of 5 tests failed, 1 errored;
// 2 test modules could not be collected (import errors):
// tests/test_a.py: ModuleNotFoundError: No module named 'requests'; …".
// Tests that ran are counted apart from the test files, modules or
// packages that could not be collected. It is "" when nothing failed.
func badReason(res *Result) string {
	coll := collectionErrors(res)
	errored := max(0, res.Errors-coll)
	executed := res.Passed + res.Failed + errored
	var parts []string
	if s := report.FailedText(res.Failed, errored, executed); s != "" {
		parts = append(parts, s)
	}
	if s := report.CollectionSummary(res.Tests, 5); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// nothingCollected reports whether no test ran, only collection errors:
// the tests could not be evaluated (a missing dependency, a syntax error),
// rather than failed.
func nothingCollected(res *Result) bool {
	coll := collectionErrors(res)
	return coll > 0 && coll == res.Errors && res.Passed+res.Failed == 0
}
