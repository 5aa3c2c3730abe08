package verify

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// npmPlaceholder is in the test script npm init writes:
// echo "Error: no test specified" && exit 1
const npmPlaceholder = "no test specified"

// lockfiles maps lockfiles to the package manager that runs the tests,
// in order of precedence. npm's own lockfiles are at the end.
var lockfiles = []struct{ file, manager string }{
	{"pnpm-lock.yaml", "pnpm"},
	{"yarn.lock", "yarn"},
	{"bun.lock", "bun"},
	{"bun.lockb", "bun"},
	{"package-lock.json", "npm"},
	{"npm-shrinkwrap.json", "npm"},
}

// testScript is how each package manager runs scripts.test, and how it
// passes arguments on to it.
var testScript = map[string]struct{ run, sep string }{
	"npm":  {"npm test", " -- "},
	"pnpm": {"pnpm test", " "},
	"yarn": {"yarn test", " "},
	"bun":  {"bun run test", " "},
}

// nodeManager is the package manager chosen to run scripts.test.
type nodeManager struct {
	name string // npm, pnpm, yarn or bun: the one that runs the script
	run  string // the command running scripts.test
	sep  string // between run and the arguments for the script
	// ok: the manager is installed (false: nothing usable was found and
	// run is the wanted manager's, which will report itself missing).
	ok  bool
	why string // for the reason: "yarn, yarn.lock", or the fallback
}

// chooseManager picks the package manager that runs scripts.test: the one
// the lockfile (else the packageManager field, else npm) names when it is
// installed; else corepack's copy of it when corepack has that version in
// its cache; else npm, which runs any package.json script.
func chooseManager(dir, field string) (nodeManager, error) {
	want, from := "", ""
	for _, l := range lockfiles {
		ok, err := isFile(filepath.Join(dir, l.file))
		if err != nil {
			return nodeManager{}, err
		}
		if ok {
			want, from = l.manager, l.file
			break
		}
	}
	fieldName, _, _ := strings.Cut(field, "@")
	if want == "" {
		// No lockfile: the packageManager field ("pnpm@9.1.0") may say.
		if _, known := testScript[fieldName]; known {
			want, from = fieldName, "packageManager field"
		}
	}
	if want == "" {
		want, from = "npm", "no lockfile"
	}
	ts := testScript[want]
	if installed(want) {
		return nodeManager{name: want, run: ts.run, sep: ts.sep, ok: true, why: want + ", " + from}, nil
	}
	names := from + " names " + want
	if from == "no lockfile" {
		names = "no lockfile: " + want
	}
	missing := names + ", which is not installed"
	if want == "yarn" || want == "pnpm" {
		if version, home := corepackReady(want, field); version != "" {
			return nodeManager{
				name: want, ok: true, sep: ts.sep,
				run: "COREPACK_ENABLE_NETWORK=0 COREPACK_HOME=" + shq(home) + " corepack " + ts.run,
				why: fmt.Sprintf("%s: corepack runs %s %s from its cache", missing, want, version),
			}, nil
		}
	}
	if want != "npm" && installed("npm") {
		return nodeManager{name: "npm", run: "npm test", sep: " -- ", ok: true, why: missing + ": npm runs the script"}, nil
	}
	if want != "npm" {
		missing += ", nor is npm"
	}
	return nodeManager{name: want, run: ts.run, sep: ts.sep, why: missing}, nil
}

// corepackReady returns the version of package manager pm corepack would
// run without the network, and corepack's home, or "" when it would need
// the network. Corepack downloads a manager it does not have, which fails
// offline (the gate runs the tests without network, and with a private
// HOME, hence COREPACK_HOME in the command): it is used only when the
// version it would pick — the packageManager field's exact version, else
// the one its lastKnownGood.json names — is already in its cache. Nothing
// is run to find out: corepack would start the project's own yarn (a
// yarnPath in .yarnrc.yml) outside the sandbox.
func corepackReady(pm, field string) (version, home string) {
	if !installed("corepack") {
		return "", ""
	}
	home = os.Getenv("COREPACK_HOME")
	if home == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", ""
			}
			cache = filepath.Join(h, ".cache")
		}
		home = filepath.Join(cache, "node", "corepack")
	}
	if !filepath.IsAbs(home) {
		return "", ""
	}
	name, ver, _ := strings.Cut(field, "@")
	switch {
	case name != "" && name != pm:
		return "", "" // corepack refuses to run another manager than the field's
	case ver != "":
		ver, _, _ = strings.Cut(ver, "+") // the hash
	default:
		data, ok, _ := readSmall(filepath.Join(home, "lastKnownGood.json"))
		var lkg map[string]any
		if !ok || json.Unmarshal([]byte(data), &lkg) != nil {
			return "", ""
		}
		ver, _ = lkg[pm].(string)
	}
	if !exactVersionRE.MatchString(ver) {
		return "", ""
	}
	if ok, _ := isFile(filepath.Join(home, "v1", pm, ver, ".corepack")); !ok {
		return "", ""
	}
	return ver, home
}

var exactVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?$`)

// nodeScript is what scripts.test was found to run, following the
// scripts it calls (npm run unit, yarn jest, …).
type nodeScript struct {
	runner string // jest, vitest, mocha, node-test; "" when not recognised
	// elsewhere is a runner found in the script but not as its last
	// command (arguments cannot reach it).
	elsewhere string
	note      string // why a runner that is there is read as text
	// tail: the runner is the last command of the script and of every
	// script on the way to it (its output ends the script's).
	tail bool
	// last: tail, and arguments added after scripts.test reach the runner
	// (every script call on the way passes them on).
	last bool
	// cut says why arguments do not reach a tail runner.
	cut string
	// simple: the runner can be started directly, as the script would
	// (one command at every step, no pre/post script on the way, no
	// wrapper but environment assignments and launchers such as npx or
	// yarn that only find the runner's program).
	simple bool
	// plain: simple, no environment assignments, the runner by its name:
	// exactly the runner and its arguments.
	plain bool
	env   string // simple: the environment assignments (shell words)
	exe   string // simple: how the runner is started when not by name ("./node_modules/.bin/jest", "node node_modules/jest/bin/jest.js")
	args  string // simple: the runner's arguments (after its name)
	// nodeBefore and nodeAfter split a simple node --test command right
	// after "--test", where options must go.
	nodeBefore, nodeAfter string
	// via are the commands followed to reach the runner, for the reason
	// ("`npm run unit`"); empty when scripts.test runs it itself.
	via []string
	// calls are the package managers the scripts run on the way (a
	// missing one means the script cannot run, the runner directly can).
	calls []string
	// runs: the scripts run test runners in more than one command (two
	// runs of vitest, jest in two scripts): ultra's arguments would reach
	// one of them at most, its report would count one run. The script
	// runs as it is, every run's output read as text; runner is "".
	runs []runUse
}

var (
	envAssignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	testFlagRE  = regexp.MustCompile(`(^|\s)--test(\s|$)`)
	anyRunnerRE = regexp.MustCompile(`(?:^|[\s/])(jest|vitest|_?mocha|node\s[^&|;]*--test)(?:$|[\s;&|])`)
	// runnerPathRE: a runner's program started by path, e.g. by node
	// (node --experimental-vm-modules node_modules/jest/bin/jest.js,
	// node ./node_modules/vitest/dist/cli-wrapper.js).
	runnerPathRE = regexp.MustCompile(`(?:^|/)node_modules/(?:\.bin/(jest|vitest|_?mocha)|(jest)(?:-cli)?/bin/jest(?:\.js)?|(vitest)/(?:vitest\.mjs|dist/cli(?:-wrapper)?\.js)|(mocha)/bin/_?mocha(?:\.js)?)$`)
)

// maxScriptDepth bounds the scripts followed from scripts.test (the
// test script and 5 levels of scripts it calls).
const maxScriptDepth = 6

// analyseScripts analyses scripts[name], following the scripts it calls.
// The runner found at the end of the script is the script's runner only
// when no other command of the script (or of the scripts it calls, or of
// their pre and post scripts) runs a test runner too: else the script is
// read as text (runs, or elsewhere for a runner ultra's arguments cannot
// reach).
func analyseScripts(scripts map[string]string, name string) nodeScript {
	a := scriptAnalyser{scripts: scripts}
	s := a.analyse(scripts[name], 0, []string{name})
	f := useFinder{a: &a, memo: map[useKey][]runUse{}, busy: map[string]bool{}}
	uses := f.script(name, 0, true)
	tail := slices.ContainsFunc(uses, func(u runUse) bool { return u.tail })
	switch {
	case len(uses) > 1:
		var calls []string
		for _, u := range uses {
			calls = mergeCalls(calls, u.calls)
		}
		return nodeScript{runs: uses, calls: calls}
	case len(uses) == 1 && s.runner != "" && !tail:
		// The command at the end only asks the runner something
		// (jest --listTests); the tests run elsewhere.
		return nodeScript{elsewhere: uses[0].runner}
	case len(uses) == 1 && s.runner == "" && s.note == "":
		s.elsewhere = uses[0].runner
	}
	return s
}

type scriptAnalyser struct{ scripts map[string]string }

func (a *scriptAnalyser) analyse(script string, depth int, seen []string) nodeScript {
	s := a.analyseLast(script, depth, seen)
	if s.runner == "" && s.note == "" && s.elsewhere == "" {
		if m := anyRunnerRE.FindStringSubmatch(script); m != nil {
			s.elsewhere = strings.TrimPrefix(m[1], "_")
			if strings.HasPrefix(s.elsewhere, "node") {
				s.elsewhere = "node-test"
			}
		}
	}
	return s
}

// analyseLast looks at the script's last command.
func (a *scriptAnalyser) analyseLast(script string, depth int, seen []string) nodeScript {
	var s nodeScript
	cmds, ok := shParse(script)
	if !ok || len(cmds) == 0 {
		return s
	}
	last := cmds[len(cmds)-1]
	if last.odd != "" {
		return s // output redirected or computed: arguments may not reach the runner
	}
	inv := a.invocation(last)
	if inv.note != "" {
		s.note = inv.note
		return s
	}
	single := len(cmds) == 1
	envText := strings.Join(inv.env, " ")

	if inv.ref != "" {
		// Another script: what it runs, with the arguments passed on.
		inner := a.scripts[inv.ref]
		if slices.Contains(seen, inv.ref) || depth+1 >= maxScriptDepth {
			return s
		}
		if inv.forwards && inv.refArgs != "" {
			inner += " " + inv.refArgs
		}
		sub := a.analyse(inner, depth+1, append(slices.Clip(seen), inv.ref))
		if sub.runner == "" {
			if sub.note != "" || sub.elsewhere != "" {
				return nodeScript{note: sub.note, elsewhere: sub.elsewhere}
			}
			return s
		}
		s = sub
		s.via = append([]string{"`" + clip(last.text, 60) + "`"}, sub.via...)
		s.calls = mergeCalls(inv.calls, sub.calls)
		if s.last && !inv.forwards {
			s.last = false
			s.cut = inv.cut
		}
		_, pre := a.scripts["pre"+inv.ref]
		_, post := a.scripts["post"+inv.ref]
		s.simple = s.simple && single && !inv.wrapped && !pre && !post
		if envText != "" {
			s.env = strings.TrimSpace(envText + " " + s.env)
		}
		s.plain = s.simple && s.plain && s.env == ""
		if s.runner == "node-test" && s.simple {
			s.nodeBefore = strings.TrimSpace(envText + " " + s.nodeBefore)
		}
		return s
	}
	if inv.runner == "" {
		return s
	}
	s.runner = inv.runner
	s.tail, s.last = true, inv.forwards
	s.cut = inv.cut
	s.calls = inv.calls
	if inv.launcher != "" {
		s.via = []string{"`" + clip(last.text, 60) + "`"}
	}
	s.args = inv.args
	s.simple = single && !inv.wrapped
	if !s.simple {
		return s
	}
	s.env = envText
	s.exe = inv.exe
	s.plain = s.env == "" && s.exe == ""
	if s.runner == "node-test" {
		run := inv.exe + inv.args
		if inv.args != "" {
			run = inv.exe + " " + inv.args
		}
		loc := testFlagRE.FindStringIndex(run)
		if loc == nil { // --test quoted, or the value of an option
			s.simple, s.plain, s.env, s.exe = false, false, "", ""
			return s
		}
		end := loc[1]
		if end > 0 && run[end-1] != 't' {
			end-- // the match took the space after --test
		}
		s.nodeBefore, s.nodeAfter = run[:end], run[end:]
		if s.env != "" {
			s.nodeBefore = s.env + " " + s.nodeBefore
		}
		s.exe, s.plain = "", s.env == ""
	}
	return s
}

func mergeCalls(a, b []string) []string {
	out := slices.Clone(a)
	for _, c := range b {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// runUse is a command of the scripts that runs a test runner.
type runUse struct {
	runner string   // jest, vitest, mocha, node-test, bun test
	cmd    string   // the command, as written
	via    []string // what led to it: `npm run unit`, scripts.pretest
	// tail: the command whose output ends the script, the one
	// analyseLast finds (ultra's arguments reach no other).
	tail  bool
	calls []string // the package managers run on the way
}

// maxUses bounds the runner commands counted (more than one is enough to
// read the script as text; the reason lists the first few).
const maxUses = 16

type useKey struct {
	name  string
	depth int
	tail  bool
}

// useFinder finds every command of a script, of the scripts it calls and
// of their pre and post scripts, that runs a test runner. Each script is
// followed once per depth (a script called from many commands does not
// multiply the work).
type useFinder struct {
	a    *scriptAnalyser
	memo map[useKey][]runUse
	busy map[string]bool // being followed: a cycle
}

func appendUses(out []runUse, more ...runUse) []runUse {
	return append(out, more[:min(len(more), maxUses-len(out))]...)
}

// usesThrough returns uses reached through step (a copy: uses may be memoised).
func usesThrough(uses []runUse, step string, calls []string) []runUse {
	out := make([]runUse, len(uses))
	for i, u := range uses {
		u.via = append([]string{step}, u.via...)
		u.calls = mergeCalls(calls, u.calls)
		out[i] = u
	}
	return out
}

// script finds the runner commands of scripts[name] as a package manager
// runs it: its pre script, the script, its post script. tail: the script's
// last command ends the test script's output.
func (f *useFinder) script(name string, depth int, tail bool) []runUse {
	if depth >= maxScriptDepth || f.busy[name] {
		return nil
	}
	k := useKey{name, depth, tail}
	if u, ok := f.memo[k]; ok {
		return u
	}
	f.busy[name] = true
	var out []runUse
	if body, ok := f.a.scripts["pre"+name]; ok {
		out = appendUses(out, usesThrough(f.commands(body, depth, false), "scripts.pre"+name, nil)...)
	}
	out = appendUses(out, f.commands(f.a.scripts[name], depth, tail)...)
	if body, ok := f.a.scripts["post"+name]; ok {
		out = appendUses(out, usesThrough(f.commands(body, depth, false), "scripts.post"+name, nil)...)
	}
	delete(f.busy, name)
	f.memo[k] = out
	return out
}

// commands finds the runner commands of a script's text.
func (f *useFinder) commands(body string, depth int, tail bool) []runUse {
	cmds, ok := shParse(body)
	if !ok {
		return nil
	}
	var out []runUse
	for i, c := range cmds {
		if len(out) >= maxUses {
			break
		}
		// analyseLast follows only a plain last command.
		t := tail && i == len(cmds)-1 && c.odd == ""
		out = appendUses(out, f.command(c, depth, t)...)
	}
	return out
}

// infoFlags make a runner answer a question instead of running tests.
var infoFlags = map[string]bool{"--clearCache": true, "--clear-cache": true, "--showConfig": true, "--show-config": true,
	"--listTests": true, "--list-tests": true, "--version": true, "-v": true, "-V": true, "--help": true, "-h": true,
	"--list-reporters": true, "--list-interfaces": true}

func infoOnly(args string) bool {
	return slices.ContainsFunc(strings.Fields(args), func(a string) bool { return infoFlags[a] })
}

// looseSkip are programs whose arguments may name a runner without
// running it.
var looseSkip = map[string]bool{"echo": true, "printf": true, "rm": true, "rimraf": true, "del": true, "del-cli": true,
	"mkdir": true, "touch": true, "cp": true, "mv": true, "cat": true, "ls": true, "git": true, "cd": true, "test": true, "[": true}

// runAllRE are npm-run-all's programs, whose arguments are script names
// (globs with ':' as the separator).
var runAllRE = regexp.MustCompile(`^(?:npm-run-all2?|run-s|run-p)$`)

// command finds the runner commands of one command: the runner it
// starts, the scripts it calls, or, when it is nothing analyseLast knows,
// a runner among its words (time jest, concurrently "jest a" "jest b",
// sh -c "…", run-s test:*).
func (f *useFinder) command(c shCmd, depth int, tail bool) []runUse {
	inv := f.a.invocation(c)
	text := strings.TrimSpace(c.text)
	switch {
	case inv.note != "":
		return []runUse{{runner: inv.noted, cmd: text, tail: tail, calls: inv.calls}}
	case inv.runner != "":
		if infoOnly(inv.args) {
			return nil
		}
		return []runUse{{runner: inv.runner, cmd: text, tail: tail, calls: inv.calls}}
	case inv.ref != "":
		return usesThrough(f.script(inv.ref, depth+1, tail), "`"+clip(text, 60)+"`", inv.calls)
	}
	w := c.words
	if len(w) == 0 || looseSkip[path.Base(w[0].val)] {
		return nil
	}
	step := "`" + clip(text, 60) + "`"
	var out []runUse
	if runAllRE.MatchString(path.Base(w[0].val)) {
		for _, wd := range w[1:] {
			if strings.HasPrefix(wd.val, "-") {
				continue
			}
			for _, name := range f.matchScripts(wd.val) {
				out = appendUses(out, usesThrough(f.script(name, depth+1, false), step, nil)...)
			}
		}
		return out
	}
	for i, wd := range w {
		v := wd.val
		if r := runnerName(v); r != "" || runnerPathRE.MatchString(v) {
			if r == "" {
				m := runnerPathRE.FindStringSubmatch(v)
				r = runnerName(strings.Join(m[1:], ""))
			}
			rest := ""
			if i+1 < len(w) {
				rest = c.text[w[i+1].start:]
			}
			if !infoOnly(rest) {
				out = appendUses(out, runUse{runner: r, cmd: v, via: []string{step}})
			}
			continue
		}
		if pm, name, ok := strings.Cut(v, ":"); ok && i > 0 && testScript[pm].run != "" && !strings.ContainsAny(v, " \t") {
			// concurrently "npm:test:*"
			for _, n := range f.matchScripts(name) {
				out = appendUses(out, usesThrough(f.script(n, depth+1, false), step, nil)...)
			}
			continue
		}
		if i > 0 && strings.ContainsAny(v, " \t\n") && depth+1 < maxScriptDepth {
			// A command in an argument: sh -c "jest && vitest".
			out = appendUses(out, usesThrough(f.commands(v, depth+1, false), step, nil)...)
		}
	}
	return out
}

// matchScripts returns the scripts a name or npm-run-all glob names
// ("test:*" matches test:unit, not test:unit:a; "test:**" matches both),
// in order.
func (f *useFinder) matchScripts(pattern string) []string {
	if !strings.ContainsAny(pattern, "*?[") {
		if _, ok := f.a.scripts[pattern]; ok {
			return []string{pattern}
		}
		return nil
	}
	var names []string
	for name := range f.a.scripts {
		ok := false
		if pre, _, deep := strings.Cut(pattern, "**"); deep {
			ok = strings.HasPrefix(name, pre)
		} else {
			ok, _ = path.Match(strings.ReplaceAll(pattern, ":", "/"), strings.ReplaceAll(name, ":", "/"))
		}
		if ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// invocation is what one command of a script starts.
type invocation struct {
	env      []string // environment assignments (shell words, as written)
	wrapped  bool     // under a wrapper that does more than find the program (nyc, c8, dotenv)
	launcher string   // the package manager that finds the program (npx, yarn, …), if any
	calls    []string // package managers run
	// forwards: arguments added at the end reach the runner, or the
	// script referred to.
	forwards bool
	cut      string // why they do not
	note     string // a runner that is there but must be read as text
	noted    string // the runner note is about (bun test, node-test)

	runner string // jest, vitest, mocha, node-test
	exe    string // the runner's program when not by name (a path, node …)
	args   string // the runner's arguments

	ref     string // another script
	refArgs string // the arguments given to it
}

// npxFlags are npx options that change nothing for a local runner; -p and
// --package take a value.
var npxFlags = map[string]bool{"-y": true, "--yes": true, "--no": true, "--no-install": true, "-q": true, "--quiet": true,
	"--prefer-offline": true, "--offline": true, "-s": true, "--silent": true}

// managerFlags are options of npm, yarn and pnpm before their command
// that change nothing for the script.
var managerFlags = map[string]bool{"-s": true, "--silent": true, "-q": true, "--quiet": true, "--if-present": true}

// elsewhereFlags make a package manager run scripts of other packages
// (workspaces, another directory), whose scripts are not these.
var elsewhereFlags = regexp.MustCompile(`^(?:-w|-ws|--workspaces?(?:=.*)?|-r|--recursive|-F|--filter(?:=.*)?|-C|--dir(?:=.*)?|--prefix(?:=.*)?|--cwd(?:=.*)?)$`)

// nodeValueOptions are node options whose value is the next word.
var nodeValueOptions = map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true,
	"--experimental-loader": true, "-C": true, "--conditions": true, "--input-type": true, "--env-file": true}

// invocation peels what starts the runner (environment assignments,
// cross-env, npx, yarn, npm run, …) off a command.
func (a *scriptAnalyser) invocation(c shCmd) invocation {
	var inv invocation
	w := c.words
	rest := func(j int) string {
		if j >= len(w) {
			return ""
		}
		return strings.TrimSpace(c.text[w[j].start:])
	}
	has := func(from int, word string) int {
		for j := from; j < len(w); j++ {
			if w[j].val == word {
				return j
			}
		}
		return -1
	}
	// elsewhere: the package manager at word i works on other packages.
	elsewhere := func(i int) bool {
		for j := i + 1; j < len(w) && w[j].val != "--"; j++ {
			if elsewhereFlags.MatchString(w[j].val) {
				return true
			}
		}
		return false
	}
	call := func(m string) {
		if !slices.Contains(inv.calls, m) {
			inv.calls = append(inv.calls, m)
		}
	}
	skip := func(i int, flags map[string]bool) int {
		for i < len(w) && flags[w[i].val] {
			i++
		}
		return i
	}
	// script: the command runs script name, with the words from j on
	// (yarn, pnpm and bun run a program of that name when there is no
	// such script).
	script := func(name string, j int, forwards bool, cut string) invocation {
		if _, ok := a.scripts[name]; !ok {
			if inv.launcher != "npm" && runnerName(name) != "" {
				return a.runnerAt(inv, c, j-1)
			}
			return invocation{}
		}
		inv.ref, inv.forwards, inv.cut = name, forwards, cut
		inv.refArgs = rest(j)
		if dd := has(j, "--"); dd >= 0 && forwards && inv.launcher == "npm" {
			inv.refArgs = rest(dd + 1)
		}
		return inv
	}
	inv.forwards = true
	i := 0
	for i < len(w) {
		v := w[i].val
		switch {
		case envAssignRE.MatchString(v):
			inv.env = append(inv.env, w[i].raw)
			i++
		case v == "cross-env":
			i++
		case v == "env":
			i++
			if i < len(w) && strings.HasPrefix(w[i].val, "-") {
				return invocation{} // env -i, -u …
			}
		case v == "--":
			i++
		case v == "dotenv" || v == "dotenv-cli":
			inv.wrapped = true
			if dd := has(i, "--"); dd >= 0 {
				i = dd + 1
				continue
			}
			i++
			for i < len(w) && strings.HasPrefix(w[i].val, "-") {
				if !strings.Contains(w[i].val, "=") && (w[i].val == "-e" || w[i].val == "-v" || w[i].val == "-c") {
					i++
				}
				i++
			}
		case v == "nyc" || v == "c8":
			inv.wrapped = true
			i++
			for i < len(w) && strings.HasPrefix(w[i].val, "-") {
				i++
			}
		case v == "npx" || v == "bunx" || v == "pnpx":
			inv.launcher = v
			call(map[string]string{"npx": "npm", "bunx": "bun", "pnpx": "pnpm"}[v])
			i++
			for i < len(w) {
				f := w[i].val
				switch {
				case npxFlags[f] || f == "--":
					i++
				case (f == "-p" || f == "--package") && i+1 < len(w):
					i += 2
				case strings.HasPrefix(f, "--package="):
					i++
				default:
					return a.runnerAt(inv, c, i)
				}
			}
			return invocation{}
		case v == "npm":
			if elsewhere(i) {
				return invocation{}
			}
			inv.launcher = "npm"
			call("npm")
			i = skip(i+1, managerFlags)
			if i >= len(w) {
				return invocation{}
			}
			switch sub := w[i].val; sub {
			case "exec", "x":
				j := skip(i+1, npxFlags)
				dd := has(i+1, "--")
				if dd == j {
					j++
				}
				fwd := dd >= 0
				inv.forwards = fwd
				if !fwd {
					inv.cut = "`npm exec` passes no options on without --"
				}
				return a.runnerAt(inv, c, j)
			case "test", "t", "tst", "start":
				name := map[string]string{"t": "test", "tst": "test"}[sub]
				if name == "" {
					name = sub
				}
				return script(name, i+1, has(i+1, "--") >= 0, "`npm "+sub+"` passes no arguments on without --")
			case "run", "run-script", "rum", "urn":
				j := skip(i+1, managerFlags)
				if j >= len(w) {
					return invocation{}
				}
				return script(w[j].val, j+1, has(j+1, "--") >= 0, "`npm run` passes no arguments on without --")
			}
			return invocation{}
		case v == "yarn" || v == "pnpm" || v == "bun":
			if elsewhere(i) {
				return invocation{}
			}
			inv.launcher = v
			call(v)
			i = skip(i+1, managerFlags)
			if i >= len(w) {
				return invocation{}
			}
			sub := w[i].val
			switch {
			case sub == "run" || (sub == "run-script" && v == "pnpm"):
				j := skip(i+1, managerFlags)
				if j >= len(w) {
					return invocation{}
				}
				return script(w[j].val, j+1, true, "")
			case sub == "exec" || sub == "dlx" || (sub == "x" && v == "bun"):
				j := i + 1
				for j < len(w) && (w[j].val == "--" || managerFlags[w[j].val]) {
					j++
				}
				return a.runnerAt(inv, c, j)
			case sub == "test" && v == "bun":
				return invocation{note: "bun test is bun's own test runner", noted: "bun test", calls: inv.calls}
			case sub == "test" || ((sub == "t" || sub == "tst") && v == "pnpm"):
				return script("test", i+1, true, "")
			case strings.HasPrefix(sub, "-"):
				return invocation{} // workspaces, filters, …: not one runner
			}
			return script(sub, i+1, true, "")
		default:
			return a.runnerAt(inv, c, i)
		}
	}
	return invocation{}
}

// runnerName is the runner a program name starts, or "".
func runnerName(name string) string {
	switch name {
	case "jest", "vitest", "mocha":
		return name
	case "_mocha":
		return "mocha"
	}
	return ""
}

// runnerAt recognises the runner whose program is the command's word i.
func (a *scriptAnalyser) runnerAt(inv invocation, c shCmd, i int) invocation {
	w := c.words
	if i >= len(w) {
		return invocation{}
	}
	rest := func(j int) string {
		if j >= len(w) {
			return ""
		}
		return strings.TrimSpace(c.text[w[j].start:])
	}
	prog := w[i].val
	if r := runnerName(path.Base(prog)); r != "" {
		inv.runner = r
		if prog != path.Base(prog) {
			if inv.launcher != "" {
				return invocation{} // npx ./x: not a program from node_modules/.bin
			}
			inv.exe = w[i].raw
		}
		inv.args = rest(i + 1)
		return inv
	}
	if path.Base(prog) != "node" || inv.launcher != "" {
		return invocation{}
	}
	// node [options] --test [files], or node [options] path/to/runner.
	for j := i + 1; j < len(w); j++ {
		f := w[j].val
		if f == "--test" {
			if strings.Contains(c.text, "--test-reporter") {
				return invocation{note: "node --test with its own --test-reporter", noted: "node-test", calls: inv.calls}
			}
			inv.runner = "node-test"
			inv.exe = strings.TrimSpace(c.text[w[i].start:w[i].end])
			inv.args = rest(i + 1)
			return inv
		}
		if nodeValueOptions[f] {
			j++
			continue
		}
		if strings.HasPrefix(f, "-") {
			continue
		}
		m := runnerPathRE.FindStringSubmatch(f)
		if m == nil {
			return invocation{}
		}
		inv.runner = runnerName(strings.Join(m[1:], ""))
		inv.exe = strings.TrimSpace(c.text[w[i].start:w[j].end])
		inv.args = rest(j + 1)
		return inv
	}
	return invocation{}
}

// shWord is a word of a shell command: as written, and its value.
type shWord struct {
	raw, val   string
	start, end int // in shCmd.text
}

// shCmd is one simple command of a shell script.
type shCmd struct {
	text  string
	words []shWord
	odd   string // why it is more than a plain command: redirection, substitution, subshell
}

// shParse splits a script into its simple commands (at &&, ||, ;, |, & and
// newlines), and each into words, as sh would for the common forms
// (quotes, escapes, comments). ok is false for unbalanced quotes.
func shParse(s string) (cmds []shCmd, ok bool) {
	var cur shCmd
	start := 0 // of the current command in s
	var val strings.Builder
	wordStart := -1
	endWord := func(i int) {
		if wordStart >= 0 {
			cur.words = append(cur.words, shWord{raw: s[wordStart:i], val: val.String(), start: wordStart - start, end: i - start})
			wordStart = -1
			val.Reset()
		}
	}
	endCmd := func(i, next int) {
		endWord(i)
		cur.text = s[start:i]
		if len(cur.words) > 0 {
			cmds = append(cmds, cur)
		}
		cur = shCmd{}
		start = next
	}
	mark := func(why string) {
		if cur.odd == "" {
			cur.odd = why
		}
	}
	inWord := func(i int) {
		if wordStart < 0 {
			wordStart = i
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\r':
			endWord(i)
		case '\n':
			endCmd(i, i+1)
		case ';':
			endCmd(i, i+1)
		case '&', '|':
			if c == '&' && i+1 < len(s) && s[i+1] == '>' {
				mark("redirection")
				endWord(i)
				i++
				continue
			}
			if i+1 < len(s) && s[i+1] == c {
				endCmd(i, i+2)
				i++
				continue
			}
			if c == '|' && i+1 < len(s) && s[i+1] == '&' {
				endCmd(i, i+2)
				i++
				continue
			}
			if c == '&' {
				mark("background") // its exit status is lost
			}
			endCmd(i, i+1)
		case '>', '<':
			mark("redirection")
			endWord(i)
			if i+1 < len(s) && (s[i+1] == '&' || s[i+1] == '>') {
				i++ // >&2, >>
			}
		case '`':
			mark("substitution")
			inWord(i)
		case '(', ')':
			if wordStart < 0 {
				mark("subshell")
			}
			inWord(i)
			val.WriteByte(c)
		case '#':
			if wordStart < 0 {
				for i < len(s) && s[i] != '\n' {
					i++
				}
				i-- // the newline ends the command
				continue
			}
			val.WriteByte(c)
		case '\\':
			inWord(i)
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					val.WriteByte(s[i])
				}
			}
		case '\'':
			inWord(i)
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			val.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			inWord(i)
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
					i++
					if s[i] != '\n' {
						val.WriteByte(s[i])
					}
				case s[i] == '`' || (s[i] == '$' && i+1 < len(s) && s[i+1] == '('):
					mark("substitution")
					val.WriteByte(s[i])
				default:
					val.WriteByte(s[i])
				}
			}
			if i >= len(s) {
				return nil, false
			}
		case '$':
			inWord(i)
			if i+1 < len(s) && s[i+1] == '(' {
				mark("substitution")
			}
			val.WriteByte(c)
		default:
			inWord(i)
			val.WriteByte(c)
		}
	}
	endCmd(len(s), len(s))
	return cmds, true
}

func detectPackageJSON(dir string) ([]Detected, string, error) {
	data, ok, err := readSmall(filepath.Join(dir, "package.json"))
	if err != nil || !ok {
		return nil, "", err
	}
	var pkg struct {
		Scripts        map[string]any `json:"scripts"`
		PackageManager string         `json:"packageManager"`
	}
	if err := json.Unmarshal([]byte(data), &pkg); err != nil {
		return nil, "package.json could not be parsed: " + err.Error(), nil
	}
	scripts := map[string]string{}
	for k, v := range pkg.Scripts {
		if s, ok := v.(string); ok {
			scripts[k] = s
		}
	}
	script := scripts["test"]
	switch {
	case strings.TrimSpace(script) == "":
		return nil, "package.json has no scripts.test", nil
	case strings.Contains(script, npmPlaceholder):
		return nil, "package.json scripts.test is the npm init placeholder", nil
	}

	pm, err := chooseManager(dir, pkg.PackageManager)
	if err != nil {
		return nil, "", err
	}
	sc := analyseScripts(scripts, "test")
	_, pre := scripts["pretest"]
	_, post := scripts["posttest"]

	// The script cannot run when a package manager it calls is missing
	// (the one running it, through corepack, runs its scripts' calls too).
	var missing []string
	for _, m := range sc.calls {
		if !installed(m) && !(pm.ok && m == pm.name) {
			missing = append(missing, m)
		}
	}
	canDirect := sc.runner != "" && sc.simple && !pre && !post
	if canDirect && sc.runner != "node-test" && sc.exe == "" && pm.ok && pm.name != "npm" {
		// pnpm, yarn and bun can find a runner elsewhere than in
		// node_modules/.bin (Plug'n'Play, a store).
		ok, _ := isFile(filepath.Join(dir, "node_modules", ".bin", sc.runner))
		canDirect = ok
	}
	because := ""
	switch {
	case !canDirect:
	case len(missing) > 0:
		because = fmt.Sprintf(" (the script calls %s, which is not installed)", strings.Join(missing, " and "))
	case !pm.ok:
		because = " (no package manager to run the script)"
	case sc.runner != "node-test" && !sc.last && sc.tail:
		because = " (arguments cannot reach it through the script: " + sc.cut + ")"
	case !sc.plain:
		canDirect = false
	}
	direct := canDirect
	d := nodeCommand(dir, pm, sc, direct)
	d.Kind = "node"
	why := fmt.Sprintf("package.json scripts.test (%s)", pm.why)
	what := runnerTitle(sc.runner)
	if len(sc.via) > 0 {
		what += " through " + strings.Join(sc.via, ", then ")
	}
	switch {
	case len(sc.runs) > 1:
		why += fmt.Sprintf(": the script runs %s (%s): run as it is, every run's output read as text", runsTitle(sc.runs), runsList(sc.runs))
	case sc.note != "":
		why += ": " + sc.note + ", output read as text"
	case sc.runner == "" && sc.elsewhere != "":
		why += fmt.Sprintf(": %s is not the script's last command (or its output is redirected), output read as text", runnerTitle(sc.elsewhere))
	case sc.runner == "":
		why += ": runner not recognised, output read as text"
	case direct && sc.plain && len(sc.via) == 0:
		why += fmt.Sprintf(": the script is exactly %s, run directly", what)
	case direct:
		why += fmt.Sprintf(": the script runs %s, run directly%s", what, because)
	case d.Runner == "script":
		cut := "arguments cannot reach it"
		if sc.cut != "" {
			cut += " (" + sc.cut + ")"
		}
		why += fmt.Sprintf(": the script runs %s but %s, and it cannot run directly; output read as text", what, cut)
	default:
		why += fmt.Sprintf(": runs %s, through %s", what, pm.name)
	}
	if len(missing) > 0 && !direct {
		why += fmt.Sprintf("; the script calls %s, which is not installed", strings.Join(missing, " and "))
	}
	if sc.runner == "jest" && d.Format == "junit" {
		why += ", jest-junit installed"
	}
	d.Reason = why
	return []Detected{d}, "", nil
}

// runsTitle says which runners the uses run, how often: "vitest twice",
// "jest and mocha", "jest 3 times and vitest".
func runsTitle(uses []runUse) string {
	var order []string
	count := map[string]int{}
	for _, u := range uses {
		if count[u.runner] == 0 {
			order = append(order, u.runner)
		}
		count[u.runner]++
	}
	var parts []string
	for _, r := range order {
		p := runnerTitle(r)
		switch n := count[r]; {
		case n == 2:
			p += " twice"
		case len(uses) == maxUses && len(order) == 1:
			p += fmt.Sprintf(" %d times or more", n)
		case n > 2:
			p += fmt.Sprintf(" %d times", n)
		}
		parts = append(parts, p)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// runsList lists the commands of the uses (the first 4), with the scripts
// leading to them: "`jest --env node` through `pnpm run test:nodejs`".
func runsList(uses []runUse) string {
	sep := ", "
	var parts []string
	for i, u := range uses {
		if i == 4 {
			parts = append(parts, "…")
			break
		}
		p := "`" + clip(u.cmd, 80) + "`"
		if len(u.via) > 0 {
			p += " through " + strings.Join(u.via, ", then ")
			sep = "; "
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, sep)
}

func runnerTitle(r string) string {
	if r == "node-test" {
		return "node --test"
	}
	return r
}

// vitestRun makes sure vitest runs once, not in watch mode (CI=true does
// too, but a developer's environment may say otherwise): "run" first in
// the arguments of a direct command.
func vitestRun(args string) string {
	f := strings.Fields(args)
	switch {
	case len(f) > 0 && f[0] == "run", slices.Contains(f, "--run"):
		return args
	case len(f) > 0 && (f[0] == "watch" || f[0] == "dev"):
		return strings.TrimSpace("run " + strings.TrimSpace(strings.TrimPrefix(args, f[0])))
	}
	return strings.TrimSpace("run " + args)
}

// nodeCommand builds the command for a script whose runner was analysed.
func nodeCommand(dir string, pm nodeManager, sc nodeScript, direct bool) Detected {
	through := func(args string) string {
		if args == "" {
			return pm.run
		}
		return pm.run + pm.sep + args
	}
	exe := sc.exe
	if exe == "" {
		if installed("npx") {
			exe = "npx --no-install " + sc.runner
		} else {
			exe = "node_modules/.bin/" + sc.runner
		}
	}
	if sc.env != "" {
		exe = sc.env + " " + exe
	}
	runArgs := sc.args
	if sc.runner == "vitest" {
		runArgs = vitestRun(runArgs)
	}
	runWith := func(args string) string {
		if direct {
			cmd := exe
			if runArgs != "" {
				cmd += " " + runArgs
			}
			return cmd + " " + args
		}
		if sc.runner == "vitest" && vitestRun(sc.args) != sc.args {
			args = "--run " + args
		}
		return through(args)
	}
	reach := direct || sc.last

	switch {
	case sc.runner == "jest" && reach:
		if ok, _ := isFile(filepath.Join(dir, "node_modules", "jest-junit", "package.json")); ok {
			env := `JEST_JUNIT_OUTPUT_FILE="$ULTRA_REPORT" JEST_JUNIT_CLASSNAME='{filepath}' JEST_JUNIT_TITLE='{classname} > {title}' JEST_JUNIT_ANCESTOR_SEPARATOR=' > ' JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true `
			cmd := env + runWith("--reporters=default --reporters=jest-junit")
			return Detected{Runner: "jest", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT", sel: selector{how: "jest", pre: cmd}}
		}
		cmd := runWith(`--json --outputFile="$ULTRA_REPORT" --testLocationInResults`)
		return Detected{Runner: "jest", Command: cmd, Format: "jest-json", Report: "$ULTRA_REPORT", sel: selector{how: "jest", pre: cmd}}
	case sc.runner == "vitest" && reach:
		cmd := runWith(`--reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`)
		return Detected{Runner: "vitest", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT", sel: selector{how: "vitest", pre: cmd}}
	case sc.runner == "mocha" && reach:
		cmd := runWith(`--reporter xunit --reporter-option output="$ULTRA_REPORT"`)
		return Detected{Runner: "mocha", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT", sel: selector{how: "mocha", pre: cmd}}
	case sc.runner == "node-test" && direct:
		pre := sc.nodeBefore + " --test-reporter=tap"
		return Detected{Runner: "node-test", Command: pre + sc.nodeAfter, Format: "tap",
			sel: selector{how: "node", pre: pre, post: sc.nodeAfter}}
	case sc.runner == "node-test" && sc.tail:
		// Options cannot follow the files through the package manager;
		// the reporter can go through NODE_OPTIONS, a name pattern cannot.
		cmd := `NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--test-reporter=tap" ` + through("")
		return Detected{Runner: "node-test", Command: cmd, Format: "tap"}
	}
	return Detected{Runner: "script", Command: through(""), Format: "auto"}
}
