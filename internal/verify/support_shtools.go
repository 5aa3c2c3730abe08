package verify

import (
	"encoding/json"
	"path"
	"slices"
	"strings"
)

// python follows `python [opts] file`, `python -m module`.
func (w *shWalker) python(args []string, oks []bool, env *shEnv) {
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case !oks[j]:
			return
		case a == "-m" && j+1 < len(args):
			mod := args[j+1]
			switch mod {
			case "pytest", "py.test", "unittest", "nose", "nose2":
				w.runner("pytest", args[j+2:], oks[j+2:], env)
				return
			}
			w.pyModule(mod, env, "run by")
			return
		case a == "-c":
			return
		case a == "-W" || a == "-X":
			j++
		case strings.HasPrefix(a, "-"):
		default:
			w.runPath(a, env, "run by", "py")
			return
		}
	}
}

// pyModule follows a module Python runs or loads by name.
func (w *shWalker) pyModule(mod string, env *shEnv, verb string) {
	if !env.cwdOK || strings.HasPrefix(mod, "no:") {
		return
	}
	files := w.t.pyResolve(path.Join(env.cwd, "__command__.py"), pyLoad{mod: mod})
	if len(files) == 0 {
		return
	}
	f := files[len(files)-1]
	if path.Base(f) == "__init__.py" {
		if m := path.Join(pathDir(f), "__main__.py"); w.t.files[m] {
			f = m
		}
	}
	w.runFile(f, env, verb, "py", false, nil)
}

// node follows `node [opts] file`, with its --require and --import files.
func (w *shWalker) node(tool string, args []string, oks []bool, env *shEnv) {
	test := false
	for j := 0; j < len(args); j++ {
		a := args[j]
		if !oks[j] {
			return
		}
		if opt, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			a = opt
			args = slices.Insert(slices.Clone(args), j+1, val)
			oks = slices.Insert(slices.Clone(oks), j+1, true)
		}
		switch {
		case tool == "deno" && j == 0 && (a == "run" || a == "test"):
			test = a == "test"
		case a == "-r" || a == "--require" || a == "--import" || a == "--loader" || a == "--experimental-loader":
			if j++; j < len(args) && oks[j] && strings.HasPrefix(args[j], ".") {
				w.runPath(args[j], env, "loaded by", "js")
			}
		case a == "-e" || a == "--eval" || a == "-p" || a == "--print":
			return
		case a == "--test":
			test = true
		case strings.HasPrefix(a, "-"):
		default:
			w.runPath(a, env, "run by", "js")
			if !test {
				return
			}
		}
	}
}

// runner follows the files a test runner's command line names: its
// configuration, setup files, plugins.
func (w *shWalker) runner(tool string, args []string, oks []bool, env *shEnv) {
	for j := 0; j < len(args); j++ {
		if !oks[j] {
			continue
		}
		a := args[j]
		if opt, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a, args, oks = opt, slices.Insert(slices.Clone(args), j+1, val), slices.Insert(slices.Clone(oks), j+1, true)
		}
		if tool == "pytest" {
			switch a {
			case "-p":
				if j++; j < len(args) && oks[j] {
					w.pyModule(args[j], env, "loaded by")
				}
			case "-c", "--config-file", "--confcutdir", "--rootdir":
				if j++; j < len(args) && oks[j] {
					w.runPath(args[j], env, "read by", "-")
				}
			}
			continue
		}
		config := a == "--config" || a == "-c"
		if config && j+1 < len(args) && oks[j+1] {
			j++
			a = args[j]
		} else if strings.HasPrefix(a, "-") {
			continue
		}
		for _, f := range w.find(a, env) {
			kind := "-"
			if isJSFile(f) {
				kind = "js"
			}
			w.runFile(f, env, "named by", kind, false, nil)
			if config {
				w.res.configs[f] = "named by " + env.who
			}
		}
	}
}

// npm follows `npm test`, `npm run x`, `yarn x`, `pnpm x`, `bun run x`
// into package.json's scripts.
func (w *shWalker) npm(tool string, args []string, oks []bool, env *shEnv) {
	dir, dirOK := env.cwd, env.cwdOK
	j := 0
	for ; j < len(args) && oks[j] && strings.HasPrefix(args[j], "-"); j++ {
		a := args[j]
		if opt, val, ok := strings.Cut(a, "="); ok {
			if opt == "--prefix" || opt == "--cwd" || opt == "--dir" {
				dir, dirOK = w.treePath(val, env)
			}
			continue
		}
		if (a == "--prefix" || a == "-C" || a == "--cwd" || a == "--dir") && j+1 < len(args) {
			j++
			dir, dirOK = w.treePath(args[j], env)
		}
	}
	if j >= len(args) || !oks[j] || !dirOK {
		return
	}
	sub := args[j]
	j++
	var script string
	switch sub {
	case "test", "t", "tst":
		if tool == "bun" {
			w.runner("bun", args[j:], oks[j:], env)
			return
		}
		script = "test"
	case "start":
		script = "start"
	case "run", "run-script", "rum", "urn":
		for ; j < len(args) && strings.HasPrefix(args[j], "-"); j++ {
		}
		if j >= len(args) || !oks[j] {
			return
		}
		script = args[j]
	case "exec", "x", "dlx":
		w.command(args[j:], oks[j:], env)
		return
	default:
		if tool == "npm" {
			return
		}
		if _, ok := w.npmScripts(dir)[sub]; !ok {
			w.command(args[j-1:], oks[j-1:], env) // yarn jest: a binary
			return
		}
		script = sub
	}
	w.npmScript(dir, script, env)
}

// npmScripts returns the scripts of the package.json npm would use from
// dir.
func (w *shWalker) npmScripts(dir string) map[string]string {
	s, _ := w.npmPackage(dir)
	return s
}

// npmPackage returns the scripts of the nearest package.json from dir
// up, and its directory.
func (w *shWalker) npmPackage(dir string) (map[string]string, string) {
	for d := dir; ; d = pathDir(d) {
		pj := path.Join(d, "package.json")
		if w.t.files[pj] {
			var doc struct {
				Scripts map[string]string `json:"scripts"`
			}
			_ = json.Unmarshal(w.t.in.Files[pj], &doc)
			return doc.Scripts, d
		}
		if d == "" {
			return nil, ""
		}
	}
}

// npmScript walks a package.json script with its pre and post scripts.
func (w *shWalker) npmScript(dir, name string, env *shEnv) {
	scripts, pkgDir := w.npmPackage(dir)
	for _, n := range []string{"pre" + name, name, "post" + name} {
		body, ok := scripts[n]
		key := "npm\x00" + pkgDir + "\x00" + n
		if !ok || w.seen[key] || w.depth > 12 {
			continue
		}
		w.seen[key] = true
		w.depth++
		w.text(body, newShEnv(pkgDir, "", path.Join(pkgDir, "package.json")+" script \""+n+"\""), false)
		w.depth--
	}
}

// tox follows `tox`: the commands of tox.ini's test environments.
func (w *shWalker) tox(env *shEnv) {
	if !env.cwdOK {
		return
	}
	ini := path.Join(env.cwd, "tox.ini")
	key := "tox\x00" + ini
	if !w.t.files[ini] || w.seen[key] {
		return
	}
	w.seen[key] = true
	section, inCommands := "", false
	for _, l := range strings.Split(w.t.content(ini), "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "["):
			section, inCommands = strings.Trim(trimmed, "[] "), false
			continue
		case !strings.HasPrefix(section, "testenv"):
			continue
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case l[0] != ' ' && l[0] != '\t':
			name, v, ok := strings.Cut(trimmed, "=")
			name = strings.TrimSpace(name)
			inCommands = ok && (name == "commands" || name == "commands_pre" || name == "commands_post")
			if !inCommands {
				continue
			}
			trimmed = strings.TrimSpace(v)
		case !inCommands:
			continue
		}
		if trimmed != "" {
			w.text(strings.NewReplacer("{posargs}", "", "{toxinidir}", "/"+env.cwd).Replace(trimmed), newShEnv(env.cwd, "", ini+" ["+section+"]"), false)
		}
	}
}
