package verify

// Summary lines of runners ultra has no parser for: a Makefile's own
// harness, Unity, Check, Catch2, doctest, minitest, RSpec, JUnit 4's text
// runner, Maven's and Gradle's console, automake. Each line is read on
// its own and the lines of a run add up, so that a target building and
// testing several times (one compiler, then another) counts every run:
//
//	"3 passed, 1 failed", "16 passed; 1 failed", "16 tests, 1 failure",
//	"PASSED: 16", "FAILED: 1", "Passed: 16 Failed: 1", "# PASS:  15"
//	"16 Tests 1 Failures 0 Ignored", "Tests run: 16, Failures: 1, Errors: 0"
//	"test cases: 16 | 15 passed | 1 failed", "100%: Checks: 16, Failures: 0"
//	"16 runs, 20 assertions, 1 failures, 0 errors, 0 skips"
//	"OK (16 tests)", "1 of 16 tests failed", "All 16 tests passed"
//
// A line counts only when every part of it is a count of a known kind
// (passed, failed, errors, skipped, or a total), and it says how many
// passed or failed (a total with the failures does: "16 tests, 1
// failure" is 15 passed). A line about assertions, suites or files
// ("assertions: 40 | 39 passed | 1 failed", jest's "Test Suites:") is not
// a count of tests; Maven's per-class lines ("…, Time elapsed: 0.1 s -- in
// x.FooTest") repeat its total and are left out.
//
// GoogleTest's "[  PASSED  ] 15 tests." and "[  FAILED  ] 1 test, listed
// below:" and libtest's "test result: FAILED. 15 passed; 1 failed; …"
// (cargo's output inside a Makefile) are families of their own.

import (
	"regexp"
	"strconv"
	"strings"
)

type countKind int

const (
	kindNone countKind = iota
	kindPassed
	kindFailed
	kindErrors
	kindSkipped
	kindTotal
	kindIgnored // counts of something else on the same line
)

// countWords maps a count's label (lower case, "test"/"tests"/"case"
// words dropped when something else remains) to its kind.
var countWords = map[string]countKind{
	"passed": kindPassed, "pass": kindPassed, "passes": kindPassed, "passing": kindPassed, "ok": kindPassed,
	"succeeded": kindPassed, "success": kindPassed, "successes": kindPassed, "successful": kindPassed, "xpassed": kindPassed,
	"failed": kindFailed, "fail": kindFailed, "fails": kindFailed, "failing": kindFailed, "failure": kindFailed,
	"failures": kindFailed, "xpass": kindFailed, "unexpected successes": kindFailed,
	"error": kindErrors, "errors": kindErrors, "errored": kindErrors,
	"skipped": kindSkipped, "skip": kindSkipped, "skips": kindSkipped, "ignored": kindSkipped, "pending": kindSkipped,
	"todo": kindSkipped, "disabled": kindSkipped, "xfail": kindSkipped, "xfailed": kindSkipped, "not run": kindSkipped,
	"expected failures": kindSkipped, "omitted": kindSkipped, "omissions": kindSkipped,
	"": kindTotal, "total": kindTotal, "run": kindTotal, "runs": kindTotal, "ran": kindTotal, "completed": kindTotal,
	"executed": kindTotal, "examples": kindTotal, "example": kindTotal, "checks": kindTotal, "specs": kindTotal,
	"assertions": kindIgnored, "assertion": kindIgnored, "expectations": kindIgnored, "measured": kindIgnored,
	"filtered out": kindIgnored, "deselected": kindIgnored, "warnings": kindIgnored, "warning": kindIgnored,
	"notifications": kindIgnored, "pendings": kindSkipped,
}

// lineLabels are the labels a whole line may carry before its counts
// ("Tests: …", "Summary: …"); any other ("Test Suites:", "Snapshots:",
// "assertions:") makes the line something else than a count of tests.
var lineLabels = map[string]bool{"summary": true, "results": true, "result": true, "totals": true, "test summary": true,
	"test results": true, "unit tests": true}

var (
	// summaryDecorRE: what frames a summary line: rulers, "#" (automake),
	// "[doctest]", Maven's "[INFO]"/"[ERROR]", Check's "100%:".
	summaryDecorRE = regexp.MustCompile(`^(?:[=*#\-~>:\s]+|\[(?:doctest|INFO|ERROR|WARNING|WARN)\]\s*|\d+%:\s*)+`)
	summaryTailRE  = regexp.MustCompile(`[=*\-~\s.!]+$`)
	// summaryTimeRE: a duration, which any count line may carry.
	summaryTimeRE = regexp.MustCompile(`(?i)[(,;|]?\s*\b(?:finished in|time elapsed:?|took|in|time:?|duration:?)\s*\d+(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds|m|min)\b\)?|\(\d+(?:\.\d+)?\s*(?:ms|s)\)`)
	summaryOKRE   = regexp.MustCompile(`^OK \((\d+) tests?\)$`)
	summaryOfRE   = regexp.MustCompile(`^(\d+) of (\d+) tests? (failed|passed)$`)
	summaryAllRE  = regexp.MustCompile(`^All (\d+) tests? passed$|^All tests passed \(\d+ assertions? in (\d+) test cases?\)$`)
	summaryTokRE  = regexp.MustCompile(`\d+|[A-Za-z][A-Za-z()]*|[:=]`)
	gtestSumRE    = regexp.MustCompile(`^\[\s*(PASSED|FAILED|SKIPPED)\s*\] (\d+) tests?(?:\.|, listed below:)$`)
	gtestRepeatRE = regexp.MustCompile(`^\d+ FAILED TESTS?$`)
	cargoSumRE    = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;`)
)

// parseCountLine reads one summary line (see above).
func parseCountLine(line string) (tally, bool) {
	s := strings.TrimSpace(line)
	if strings.Contains(s, "Time elapsed") {
		return tally{}, false // Maven's per-class line
	}
	s = summaryDecorRE.ReplaceAllString(s, "")
	s = summaryTimeRE.ReplaceAllString(s, "")
	s = summaryTailRE.ReplaceAllString(s, "")
	if s == "" || len(s) > 200 {
		return tally{}, false
	}
	if m := summaryOKRE.FindStringSubmatch(s); m != nil {
		return tally{Passed: atoiSafe(m[1])}, true
	}
	if m := summaryOfRE.FindStringSubmatch(s); m != nil {
		n, total := atoiSafe(m[1]), atoiSafe(m[2])
		if m[3] == "passed" {
			return tally{Passed: n, Failed: max(0, total-n)}, true
		}
		return tally{Passed: max(0, total-n), Failed: n}, true
	}
	if m := summaryAllRE.FindStringSubmatch(s); m != nil {
		return tally{Passed: atoiSafe(m[1] + m[2])}, true
	}
	rest := s
	// "Summary: 3 passed, 1 failed": a label for the whole line, unless
	// it is the first count's ("Passed: 16 Failed: 1", "Tests run: 16").
	if i := strings.IndexByte(s, ':'); i > 0 {
		label := strings.TrimSpace(s[:i])
		if _, isCount := countKindOf(strings.Fields(label)); !isCount {
			if !lineLabels[strings.ToLower(label)] {
				return tally{}, false
			}
			rest = s[i+1:]
		}
	}
	counts, ok := countItems(rest)
	if !ok {
		return tally{}, false
	}
	var t tally
	total, hasTotal, status := 0, false, false
	for _, c := range counts {
		switch c.kind {
		case kindPassed:
			t.Passed += c.n
			status = true
		case kindFailed:
			t.Failed += c.n
			status = true
		case kindErrors:
			t.Errors += c.n
		case kindSkipped:
			t.Skipped += c.n
		case kindTotal:
			total, hasTotal = total+c.n, true
		}
	}
	if counts[0].kind == kindIgnored {
		return tally{}, false // "assertions: …": not tests
	}
	switch {
	case hasTotal && !hadPassed(counts):
		if !status && t.Errors+t.Skipped == 0 {
			return tally{}, false // a total alone: "16 tests"
		}
		t.Passed = max(0, total-t.Failed-t.Errors-t.Skipped)
	case !status && len(counts) == 1 && counts[0].labelFirst && (counts[0].kind == kindSkipped || counts[0].kind == kindErrors):
		// automake's "# SKIP:  2" and "# ERROR: 1", each on its own line
	case !status:
		return tally{}, false
	}
	return t, true
}

func hadPassed(cs []count) bool {
	for _, c := range cs {
		if c.kind == kindPassed {
			return true
		}
	}
	return false
}

type count struct {
	n          int
	kind       countKind
	labelFirst bool // "Failures: 1" rather than "1 failure"
}

// countItems reads "N label" and "label: N" (or "label=N") items,
// separated by commas, semicolons, bars or spaces. Every word must belong
// to an item with a known label.
func countItems(s string) ([]count, bool) {
	toks := summaryTokRE.FindAllString(s, -1)
	// Everything but the tokens must be separators.
	rest := summaryTokRE.ReplaceAllString(s, "")
	if strings.Trim(rest, " ,;|\t") != "" {
		return nil, false
	}
	var out []count
	for i := 0; i < len(toks); {
		switch {
		case isNumber(toks[i]):
			// N label…: the words up to the next number or label: N.
			j := i + 1
			for j < len(toks) && !isNumber(toks[j]) && toks[j] != ":" && toks[j] != "=" &&
				!(j+1 < len(toks) && (toks[j+1] == ":" || toks[j+1] == "=")) {
				j++
			}
			k, ok := countKindOf(toks[i+1 : j])
			if !ok || j == i+1 {
				return nil, false
			}
			out = append(out, count{n: atoiSafe(toks[i]), kind: k})
			i = j
		default:
			// label… [:=] N
			j := i
			for j < len(toks) && !isNumber(toks[j]) && toks[j] != ":" && toks[j] != "=" {
				j++
			}
			if j == i || j >= len(toks) {
				return nil, false
			}
			words := toks[i:j]
			if toks[j] == ":" || toks[j] == "=" {
				j++
			} else if len(out) > 0 || j+1 < len(toks) {
				// "label N" without ":" only as the whole line ("Ran 5"
				// and the like are other families').
				return nil, false
			}
			if j >= len(toks) || !isNumber(toks[j]) {
				return nil, false
			}
			k, ok := countKindOf(words)
			if !ok || (k == kindTotal && len(words) == 0) {
				return nil, false
			}
			out = append(out, count{n: atoiSafe(toks[j]), kind: k, labelFirst: true})
			i = j + 1
		}
	}
	return out, len(out) > 0
}

func isNumber(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// countKindOf names the kind of a count's label words.
func countKindOf(words []string) (countKind, bool) {
	var kept []string
	for _, w := range words {
		w = strings.ToLower(strings.TrimSuffix(w, "(s)"))
		switch w {
		case "test", "tests", "case", "cases", "testcases":
			continue
		}
		kept = append(kept, w)
	}
	k, ok := countWords[strings.Join(kept, " ")]
	if !ok || (len(kept) == 0 && len(words) == 0) {
		return kindNone, false
	}
	return k, true
}

// gtestSummary reads GoogleTest's "[  PASSED  ] 15 tests." and
// "[  FAILED  ] 1 test, listed below:" (and SKIPPED).
func gtestSummary(s string) (tally, bool) {
	s = strings.TrimSpace(s)
	if gtestRepeatRE.MatchString(s) {
		return tally{}, true // " 1 FAILED TEST" repeats "[  FAILED  ] 1 test"
	}
	m := gtestSumRE.FindStringSubmatch(s)
	if m == nil {
		return tally{}, false
	}
	n, _ := strconv.Atoi(m[2])
	switch m[1] {
	case "PASSED":
		return tally{Passed: n}, true
	case "FAILED":
		return tally{Failed: n}, true
	}
	return tally{Skipped: n}, true
}

// cargoSummary reads libtest's "test result: ok. 3 passed; 0 failed; 1
// ignored; …".
func cargoSummary(s string) (tally, bool) {
	m := cargoSumRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return tally{}, false
	}
	return tally{Passed: atoiSafe(m[1]), Failed: atoiSafe(m[2]), Skipped: atoiSafe(m[3])}, true
}

// Failing tests named by lines of their own:
//
//	"FAIL: test_add", "FAILED: tests/a.sh", "FAILED test_x", "ERROR: t"
//	"FAIL: test_x (mod.Class.test_x)"      (unittest)
//	"test_x (mod.Class.test_x) ... FAIL"   (unittest -v)
//	"test tests::x ... FAILED", "tests::x --- FAILED" (cargo -q), "t1 ... FAIL"
//	"[  FAILED  ] Suite.Case (0 ms)", "[FAIL] adds numbers"
var (
	failColonRE   = regexp.MustCompile(`^(FAIL|FAILED|ERROR):\s+(\S.*?)\s*$`)
	failDotsRE    = regexp.MustCompile(`^(?:test )?(\S+)(?: \(([\w.]+)\))? (?:\.\.\.|---) (?:FAIL|FAILED|ERROR)\b`)
	failBracketRE = regexp.MustCompile(`^\[\s*(?:FAIL|FAILED|ERROR)\s*\]\s+(\S.*?)(?:, where .*| \(\d+ ms\))?\s*$`)
)

// failingLineName is the test a line names as failing, "" when none.
func failingLineName(s string) string {
	t := strings.TrimSpace(s)
	if m := failColonRE.FindStringSubmatch(t); m != nil {
		if u := utBlockRE.FindStringSubmatch(t); u != nil {
			return unittestName(u[2], u[3])
		}
		name := m[2]
		if isNumber(name) || (m[1] == "ERROR" && strings.ContainsAny(name, " \t")) || len(name) > 120 {
			return ""
		}
		return name
	}
	if m := failDotsRE.FindStringSubmatch(t); m != nil {
		if m[2] != "" {
			return unittestName(m[1], m[2])
		}
		return m[1]
	}
	if m := failBracketRE.FindStringSubmatch(t); m != nil && !isNumber(m[1]) && len(m[1]) <= 120 {
		return m[1]
	}
	return ""
}
