package verify

import (
	"regexp"
	"slices"
	"strings"
)

// selector says how a detected command runs only some tests: the
// selection arguments go between pre and post (Command is pre+post).
type selector struct {
	how  string // go, pytest, unittest, jest, vitest, mocha, node, cargo, maven, gradle, ctest; "" cannot select
	pre  string
	post string
	mod  string // go: the module path, to route test names to modules
}

// canSelect reports whether the command can run only some tests.
func (d Detected) canSelect() bool { return d.sel.how != "" }

// owns reports whether test name belongs to this command (with several Go
// modules, to the module whose path is the longest prefix of the name).
func (d Detected) owns(name string, all []Detected) bool {
	if d.sel.how != "go" || len(all) < 2 {
		return true
	}
	pkg, _ := splitGoName(name)
	best := ""
	for _, o := range all {
		if o.sel.mod != "" && goPathHasPrefix(pkg, o.sel.mod) && len(o.sel.mod) > len(best) {
			best = o.sel.mod
		}
	}
	return best != "" && best == d.sel.mod
}

func goPathHasPrefix(pkg, mod string) bool {
	return pkg == mod || strings.HasPrefix(pkg, mod+"/")
}

// maxSelect bounds the tests a command selects by name (its command line
// grows with each); with more, everything runs.
const maxSelect = 500

// selectCommand returns the command running only the named tests; ok is
// false when the runner cannot select or none of the names can be
// selected by it.
func (d Detected) selectCommand(names []string) (string, bool) {
	var clean []string
	seen := map[string]bool{}
	for _, n := range names {
		if n = baseName(strings.TrimSpace(n)); n != "" && !seen[n] {
			seen[n] = true
			clean = append(clean, n)
		}
	}
	names = clean
	if len(names) == 0 || len(names) > maxSelect || !d.canSelect() {
		return "", false
	}
	args := ""
	switch d.sel.how {
	case "go":
		return goSelect(d.sel.pre, names)
	case "pytest":
		var ids []string
		for _, n := range names {
			if strings.Contains(n, "::") || strings.HasSuffix(n, ".py") {
				ids = append(ids, shq(n))
			}
		}
		if len(ids) == 0 {
			return "", false
		}
		args = strings.Join(ids, " ")
	case "unittest":
		var ks []string
		for _, n := range names {
			ks = append(ks, "-k "+shq(n))
		}
		args = strings.Join(ks, " ")
	case "jest":
		// Test files as path patterns (regular expressions): jest loads
		// only those, not every test file of the project.
		args = "-t " + shq(titlePattern(names, false))
		for _, f := range jsFiles(names) {
			args += " " + shq(regexp.QuoteMeta(f)+"$")
		}
	case "vitest":
		// vitest's full names start with the (empty) name of the file's
		// own suite and a space. Files are filters on the test file path.
		args = "-t " + shq("^ ?"+strings.TrimPrefix(titlePattern(names, false), "^"))
		for _, f := range jsFiles(names) {
			args += " " + shq(f)
		}
	case "mocha":
		args = "--grep " + shq(titlePattern(names, true))
	case "node":
		// --test-name-pattern matches each test's own name.
		var pats []string
		for _, n := range names {
			pats = append(pats, "--test-name-pattern="+shq("^"+regexp.QuoteMeta(lastTitle(n))+"$"))
		}
		args = strings.Join(slices.Compact(pats), " ")
	case "cargo":
		return cargoSelect(d.sel.pre+" ", d.sel.post, names)
	case "maven":
		args = "-Dtest=" + shq(mavenPattern(names)) + " -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false"
	case "gradle":
		var ts []string
		for _, n := range names {
			ts = append(ts, "--tests "+shq(strings.ReplaceAll(n, "#", ".")))
		}
		args = strings.Join(ts, " ")
	case "ctest":
		var alts []string
		for _, n := range names {
			alts = append(alts, regexp.QuoteMeta(n))
		}
		args = "-R " + shq("^("+strings.Join(alts, "|")+")$")
	default:
		return "", false
	}
	return d.sel.pre + " " + args + d.sel.post, true
}

// jsTitleSep separates describe blocks and the test title in the names of
// JavaScript tests ("Suite > test").
const jsTitleSep = " > "

// titlePattern is the regular expression matching the full titles of the
// named tests (describe blocks and title joined by spaces), as jest's -t,
// vitest's -t and mocha's --grep see them. dots: a "." may separate the
// describe block from the title (JUnit names of mocha's xunit reporter
// read like Java's "Class.method"), so it matches a space too.
func titlePattern(names []string, dots bool) string {
	var alts []string
	for _, n := range names {
		parts := strings.Split(stripSuite(n), jsTitleSep)
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
			if dots {
				parts[i] = strings.ReplaceAll(parts[i], `\.`, `[. ]`)
			}
		}
		alts = append(alts, strings.Join(parts, " "))
	}
	slices.Sort(alts)
	alts = slices.Compact(alts)
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

// stripSuite removes the test file JavaScript test names start with
// ("src/a.test.ts > suite > test"), or a "file::" prefix.
func stripSuite(n string) string {
	if i := strings.Index(n, "::"); i >= 0 {
		return n[i+2:]
	}
	if first, rest, ok := strings.Cut(n, jsTitleSep); ok && jsFileRE.MatchString(first) {
		return rest
	}
	return n
}

// SelectName is the name to ask for (Request.Only) a test named name that
// the runner put in suite, with its failure located in file ("" when
// unknown): a JavaScript test's name starts with its test file, a cargo
// test's with its test binary ("tests/api.rs > add"), so that only that
// file is loaded, that binary run.
func SelectName(name, suite, file string) string {
	for _, s := range []string{suite, file} {
		if s == "" || strings.HasPrefix(name, s+jsTitleSep) {
			continue
		}
		if jsFileRE.MatchString(s) || (s == suite && cargoTarget(s) != "") {
			return s + jsTitleSep + name
		}
	}
	return name
}

// cargoTarget is the cargo test option that runs only the test binary
// libtest announced as suite: "src/lib.rs" → --lib, "tests/api.rs" →
// --test api, "benches/b.rs" → --bench b, "Doc-tests demo" → --doc; ""
// when there is none (a binary's own tests, whose name cargo knows).
func cargoTarget(suite string) string {
	switch {
	case suite == "src/lib.rs":
		return "--lib"
	case strings.HasPrefix(suite, "Doc-tests "):
		return "--doc"
	}
	for _, kind := range []string{"tests", "benches", "examples"} {
		if rest, ok := strings.CutPrefix(suite, kind+"/"); ok && strings.HasSuffix(rest, ".rs") {
			name := strings.TrimSuffix(rest, ".rs")
			name = strings.TrimSuffix(name, "/main")
			if name != "" && !strings.ContainsAny(name, "/ ") {
				return "--" + strings.TrimSuffix(kind, "s") + " " + shq(name)
			}
		}
	}
	return ""
}

// cargoTargets splits cargo names "suite > test" into the target options
// of their binaries (none unless every name has one) and the test names.
func cargoTargets(names []string) (targets []string, tests []string) {
	every := true
	for _, n := range names {
		suite, test, ok := strings.Cut(n, jsTitleSep)
		t := ""
		if ok {
			t = cargoTarget(suite)
		}
		if t == "" {
			every = false
			test = n
		} else {
			targets = append(targets, t)
		}
		tests = append(tests, test)
	}
	if !every {
		targets = nil
	}
	slices.Sort(targets)
	return slices.Compact(targets), tests
}

// jsFiles are the test files the named JavaScript tests are in, when
// every name starts with its file ("src/a.test.ts > suite > test"); else
// none (a name without its file could be in any).
func jsFiles(names []string) []string {
	var files []string
	for _, n := range names {
		first, _, ok := strings.Cut(n, jsTitleSep)
		if !ok || !jsFileRE.MatchString(first) {
			return nil
		}
		files = append(files, first)
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// jsFileRE matches the name of a JavaScript or TypeScript test file.
var jsFileRE = regexp.MustCompile(`^\S*\.(?:[cm]?[jt]sx?|vue|svelte|coffee)$`)

func lastTitle(n string) string {
	n = stripSuite(n)
	if i := strings.LastIndex(n, jsTitleSep); i >= 0 {
		return n[i+len(jsTitleSep):]
	}
	return n
}

// cargoTestName is the libtest name of a cargo case ("tests::adds").
func cargoTestName(n string) string { return n }

var repeatRE = regexp.MustCompile(` #\d+$`)

// baseName drops the " #2" reports add to the second test of the same
// name: the runner knows it by its own name.
func baseName(n string) string { return repeatRE.ReplaceAllString(n, "") }

// mavenPattern turns "com.acme.FooTest.testBar" names into surefire's
// -Dtest=FooTest#testBar+testBaz,BarTest#x.
func mavenPattern(names []string) string {
	byClass := map[string][]string{}
	var order []string
	for _, n := range names {
		n = strings.ReplaceAll(n, "#", ".")
		if i := strings.Index(n, "("); i >= 0 { // "testBar(com.acme.FooTest)" (JUnit 4 style)
			method, class := n[:i], strings.TrimSuffix(n[i+1:], ")")
			n = class + "." + method
		}
		class, method := n, ""
		if i := strings.LastIndexByte(n, '.'); i >= 0 {
			class, method = n[:i], n[i+1:]
		}
		if j := strings.LastIndexByte(class, '.'); j >= 0 {
			class = class[j+1:]
		}
		if _, ok := byClass[class]; !ok {
			order = append(order, class)
		}
		if method != "" {
			byClass[class] = append(byClass[class], method)
		}
	}
	var parts []string
	for _, c := range order {
		if ms := byClass[c]; len(ms) > 0 {
			parts = append(parts, c+"#"+strings.Join(ms, "+"))
		} else {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, ",")
}

// splitGoName splits "example.com/m/pkg.TestX/sub" into the import path
// and the test name ("TestX/sub"); a name without a test (a package that
// failed to build) is all import path. The test starts at the first "."
// followed by a test function's prefix: import paths rarely have one,
// subtest names (which may hold "/" and ".") come after it.
func splitGoName(n string) (pkg, test string) {
	for i := 1; i < len(n); i++ {
		if n[i] == '.' && isGoTestFunc(n[i+1:]) {
			return n[:i], n[i+1:]
		}
	}
	if isGoTestFunc(n) {
		return "", n // no import path: cannot be routed
	}
	return n, ""
}

func isGoTestFunc(s string) bool {
	for _, p := range []string{"Test", "Example", "Fuzz", "Benchmark"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// goSelect runs the named Go tests: per package, -run with an alternation
// of the tests ("^TestA$|^TestB$/^sub$"), packages with the same pattern
// together; a package named alone (a build failure) runs whole.
func goSelect(base string, names []string) (string, bool) {
	byPkg := map[string][]string{}
	var pkgs []string
	whole := map[string]bool{}
	for _, n := range names {
		pkg, test := splitGoName(n)
		if pkg == "" {
			continue
		}
		if _, ok := byPkg[pkg]; !ok {
			pkgs = append(pkgs, pkg)
			byPkg[pkg] = nil
		}
		if test == "" {
			whole[pkg] = true
			continue
		}
		var levels []string
		for part := range strings.SplitSeq(test, "/") {
			levels = append(levels, "^"+regexp.QuoteMeta(part)+"$")
		}
		byPkg[pkg] = append(byPkg[pkg], strings.Join(levels, "/"))
	}
	if len(pkgs) == 0 {
		return "", false
	}
	// Group packages by pattern, in first-seen order.
	var patterns []string
	pkgsOf := map[string][]string{}
	for _, p := range pkgs {
		pat := ""
		if !whole[p] {
			alts := slices.Compact(slices.Sorted(slices.Values(byPkg[p])))
			pat = strings.Join(alts, "|")
		}
		if _, ok := pkgsOf[pat]; !ok {
			patterns = append(patterns, pat)
		}
		pkgsOf[pat] = append(pkgsOf[pat], p)
	}
	prefix := strings.TrimSuffix(base, " ./...")
	var cmds []string
	for _, pat := range patterns {
		c := prefix
		if pat != "" {
			c += " -run " + shq(pat)
		}
		for _, p := range pkgsOf[pat] {
			c += " " + shq(p)
		}
		cmds = append(cmds, c)
	}
	if len(cmds) == 1 {
		return cmds[0], true
	}
	// Every invocation runs; the exit status is the first failure's.
	var b strings.Builder
	b.WriteString("rc=0")
	for _, c := range cmds {
		b.WriteString("; " + c + " || rc=$?")
	}
	b.WriteString("; exit $rc")
	return b.String(), true
}

// cargoSelect runs the named cargo tests: only the failing tests'
// binaries (cargo test --lib --test api -- --exact NAMES), each told the
// exact names; the doc-tests ("Doc-tests demo > src/lib.rs - add (line
// 5)") in a cargo test --doc of their own, since cargo refuses --doc with
// other target options ("can't mix --doc with other target selecting
// options"). Both run; the exit status is the first failure's.
func cargoSelect(pre, post string, names []string) (string, bool) {
	var docs, rest []string
	for _, n := range names {
		if suite, test, ok := strings.Cut(n, jsTitleSep); ok && cargoTarget(suite) == "--doc" {
			docs = append(docs, test)
		} else {
			rest = append(rest, n)
		}
	}
	var cmds []string
	if len(rest) > 0 {
		targets, tests := cargoTargets(rest)
		var qs []string
		for _, n := range tests {
			qs = append(qs, shq(cargoTestName(n)))
		}
		args := ""
		if len(targets) > 0 {
			args = strings.Join(targets, " ") + " "
		}
		cmds = append(cmds, pre+args+"-- --exact "+strings.Join(qs, " ")+post)
	}
	if len(docs) > 0 {
		var fs []string
		for _, n := range docs {
			fs = append(fs, shq(cargoDocFilter(n)))
		}
		slices.Sort(fs)
		cmds = append(cmds, pre+"--doc -- "+strings.Join(slices.Compact(fs), " ")+post)
	}
	if len(cmds) == 1 {
		return cmds[0], true
	}
	return "rc=0; " + cmds[0] + " || rc=$?; " + cmds[1] + " || rc=$?; exit $rc", true
}

var cargoDocRE = regexp.MustCompile(`^\S+ - (.*?) ?\(line (\d+)\)$`)

// cargoDocFilter is the filter that runs the doc-test named name
// ("src/lib.rs - add (line 5)") again. cargo hands the arguments after
// -- to rustdoc as --test-args, which rustdoc splits at whitespace: a
// doc-test's name, which has spaces, cannot be passed whole (--exact
// 'src/lib.rs - add (line 5)' runs nothing; without --exact its words
// "-" and "(line" run every doc-test). The filter is one word of the
// name, matched as a substring: the item ("add", "Calc::new") when it has
// no space, else the line ("5)"). It may run a few other doc-tests too.
func cargoDocFilter(name string) string {
	m := cargoDocRE.FindStringSubmatch(name)
	if m == nil {
		return name
	}
	if m[1] != "" && !strings.ContainsAny(m[1], " \t") {
		return m[1]
	}
	return m[2] + ")"
}
