package verify

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

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
