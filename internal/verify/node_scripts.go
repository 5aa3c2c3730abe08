package verify

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

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
