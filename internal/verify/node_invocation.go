package verify

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

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
