package verify

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
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

// nodeScript is what scripts.test was found to run.
type nodeScript struct {
	runner string // jest, vitest, mocha, node-test; "" when not recognised
	// elsewhere is a runner found in the script but not as its last
	// command (arguments cannot reach it).
	elsewhere string
	note      string // why a runner that is there is read as text
	// last: the runner is the script's last command, so arguments added
	// through the package manager reach it.
	last bool
	// simple: the script is exactly the runner and its arguments (one
	// command, no environment, no wrapper), which can then run directly.
	simple bool
	args   string // simple: the script after the runner's name
	// nodeBefore and nodeAfter split a simple node --test script right
	// after "--test", where options must go.
	nodeBefore, nodeAfter string
}

var (
	scriptSplitRE = regexp.MustCompile(`&&|\|\||;|\|`)
	envAssignRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	testFlagRE    = regexp.MustCompile(`(^|\s)--test(\s|$)`)
)

// wrappers run the command after them with its arguments unchanged.
var wrappers = map[string]bool{"cross-env": true, "npx": true, "nyc": true, "c8": true, "dotenv": true, "env": true}

var anyRunnerRE = regexp.MustCompile(`(?:^|[\s/])(jest|vitest|_?mocha|node\s[^&|;]*--test)(?:$|[\s;&|])`)

func analyseScript(script string) nodeScript {
	s := analyseLast(script)
	if s.runner == "" && s.note == "" {
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
func analyseLast(script string) nodeScript {
	var s nodeScript
	script = strings.TrimSpace(script)
	segments := scriptSplitRE.Split(script, -1)
	last := strings.TrimSpace(segments[len(segments)-1])
	if strings.ContainsAny(last, "<>`") || strings.Contains(last, "$(") {
		return s // output redirected or computed: arguments may not reach the runner
	}
	fields := strings.Fields(last)
	plain := len(segments) == 1
	i := 0
	for i < len(fields) {
		f := fields[i]
		if envAssignRE.MatchString(f) || wrappers[f] || f == "--" {
			plain = false
			i++
			continue
		}
		break
	}
	if i == len(fields) {
		return s
	}
	name := path.Base(fields[i])
	switch name {
	case "jest", "vitest", "mocha", "_mocha":
		s.runner = strings.TrimPrefix(name, "_")
	case "node":
		// node [node options] --test [files]: --test before any file.
		for _, f := range fields[i+1:] {
			if f == "--test" {
				s.runner = "node-test"
				break
			}
			if !strings.HasPrefix(f, "-") {
				break
			}
		}
		if s.runner == "" {
			return s
		}
		if strings.Contains(last, "--test-reporter") {
			s.runner = ""
			s.note = "node --test with its own --test-reporter"
			return s
		}
	default:
		return s
	}
	s.last = true
	s.simple = plain && fields[i] == name // run from PATH/node_modules, not a path
	if s.simple {
		rest := strings.TrimSpace(strings.TrimPrefix(last, fields[i]))
		s.args = rest
		if s.runner == "node-test" {
			loc := testFlagRE.FindStringIndex(last)
			end := loc[1]
			if end > 0 && last[end-1] != 't' {
				end-- // the match took the space after --test
			}
			s.nodeBefore, s.nodeAfter = last[:end], last[end:]
		}
	}
	return s
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
	script, _ := pkg.Scripts["test"].(string)
	switch {
	case strings.TrimSpace(script) == "":
		return nil, "package.json has no scripts.test", nil
	case strings.Contains(script, npmPlaceholder):
		return nil, "package.json scripts.test is the npm init placeholder", nil
	}

	pm, pmWhy := "", ""
	for _, l := range lockfiles {
		ok, err := isFile(filepath.Join(dir, l.file))
		if err != nil {
			return nil, "", err
		}
		if ok {
			pm, pmWhy = l.manager, l.file
			break
		}
	}
	if pm == "" {
		// No lockfile: the packageManager field ("pnpm@9.1.0") may say.
		if name, _, _ := strings.Cut(pkg.PackageManager, "@"); name != "" {
			if _, known := testScript[name]; known {
				pm, pmWhy = name, "packageManager field"
			}
		}
	}
	if pm == "" {
		pm, pmWhy = "npm", "no lockfile"
	}

	sc := analyseScript(script)
	_, pre := pkg.Scripts["pretest"].(string)
	_, post := pkg.Scripts["posttest"].(string)
	direct := sc.simple && !pre && !post
	if direct && sc.runner != "node-test" && pm != "npm" {
		ok, _ := isFile(filepath.Join(dir, "node_modules", ".bin", sc.runner))
		direct = ok
	}
	d := nodeCommand(dir, pm, sc, direct)
	d.Kind = "node"
	why := fmt.Sprintf("package.json scripts.test (%s, %s)", pm, pmWhy)
	switch {
	case sc.note != "":
		why += ": " + sc.note + ", output read as text"
	case sc.runner == "" && sc.elsewhere != "":
		why += fmt.Sprintf(": %s is not the script's last command (or its output is redirected), output read as text", runnerTitle(sc.elsewhere))
	case sc.runner == "":
		why += ": runner not recognised, output read as text"
	case direct:
		why += fmt.Sprintf(": the script is exactly %s, run directly", runnerTitle(sc.runner))
	default:
		why += fmt.Sprintf(": runs %s, through %s", runnerTitle(sc.runner), pm)
	}
	if sc.runner == "jest" && d.Format == "junit" {
		why += ", jest-junit installed"
	}
	d.Reason = why
	return []Detected{d}, "", nil
}

func runnerTitle(r string) string {
	if r == "node-test" {
		return "node --test"
	}
	return r
}

// nodeCommand builds the command for a script whose runner was analysed.
func nodeCommand(dir, pm string, sc nodeScript, direct bool) Detected {
	ts := testScript[pm]
	through := func(args string) string {
		if args == "" {
			return ts.run
		}
		return ts.run + ts.sep + args
	}
	npx := func(args string) string {
		cmd := "npx --no-install " + sc.runner
		if sc.args != "" {
			cmd += " " + sc.args
		}
		return cmd + " " + args
	}
	runWith := func(args string) string {
		if direct {
			return npx(args)
		}
		return through(args)
	}

	switch {
	case sc.runner == "jest" && sc.last:
		if ok, _ := isFile(filepath.Join(dir, "node_modules", "jest-junit", "package.json")); ok {
			env := `JEST_JUNIT_OUTPUT_FILE="$ULTRA_REPORT" JEST_JUNIT_CLASSNAME='{filepath}' JEST_JUNIT_TITLE='{classname} > {title}' JEST_JUNIT_ANCESTOR_SEPARATOR=' > ' JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true `
			cmd := env + runWith("--reporters=default --reporters=jest-junit")
			return Detected{Runner: "jest", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT", sel: selector{how: "jest", pre: cmd}}
		}
		cmd := runWith(`--json --outputFile="$ULTRA_REPORT" --testLocationInResults`)
		return Detected{Runner: "jest", Command: cmd, Format: "jest-json", Report: "$ULTRA_REPORT", sel: selector{how: "jest", pre: cmd}}
	case sc.runner == "vitest" && sc.last:
		cmd := runWith(`--reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`)
		return Detected{Runner: "vitest", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT", sel: selector{how: "vitest", pre: cmd}}
	case sc.runner == "mocha" && sc.last:
		cmd := runWith(`--reporter xunit --reporter-option output="$ULTRA_REPORT"`)
		return Detected{Runner: "mocha", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT", sel: selector{how: "mocha", pre: cmd}}
	case sc.runner == "node-test" && direct:
		pre := sc.nodeBefore + " --test-reporter=tap"
		return Detected{Runner: "node-test", Command: pre + sc.nodeAfter, Format: "tap",
			sel: selector{how: "node", pre: pre, post: sc.nodeAfter}}
	case sc.runner == "node-test" && sc.last:
		// Options cannot follow the files through the package manager;
		// the reporter can go through NODE_OPTIONS, a name pattern cannot.
		cmd := `NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--test-reporter=tap" ` + through("")
		return Detected{Runner: "node-test", Command: cmd, Format: "tap"}
	}
	return Detected{Runner: "script", Command: through(""), Format: "auto"}
}
