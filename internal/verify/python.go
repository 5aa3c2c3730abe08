package verify

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

var (
	pytestIniRE = regexp.MustCompile(`(?m)^\s*\[tool\.pytest\.ini_options\]`)
	pytestDepRE = regexp.MustCompile(`(?m)["']pytest(?:[\s<>=~!\[;,"']|$)|^\s*pytest\s*=`)
	setupCfgRE  = regexp.MustCompile(`(?m)^\s*\[tool:pytest\]`)
	toxIniRE    = regexp.MustCompile(`(?m)^\s*\[pytest\]`)
	// requireTxtRE: a requirement line naming pytest itself (not
	// pytest-cov), as in requirements files and ini values.
	requireTxtRE = regexp.MustCompile(`(?im)^\s*pytest(?:[\s<>=~!\[;@]|$)`)
	// pytestQuotedRE: pytest required in a quoted string (Python, TOML).
	pytestQuotedRE = regexp.MustCompile(`(?i)["']pytest(?:[\s<>=~!\[;,"'@]|$)`)
	// pytestKeyRE: pytest as a key (poetry, Pipfile).
	pytestKeyRE = regexp.MustCompile(`(?i)^\s*["']?pytest["']?\s*=`)
	// pytestCallRE: a command line running pytest.
	pytestCallRE   = regexp.MustCompile(`(?:^|[\s/}'"])(?:py\.test|pytest)(?:$|[\s'"])|-m\s+pytest(?:$|[\s'"])`)
	pytestImportRE = regexp.MustCompile(`(?m)^[ \t]*(?:import[ \t]+pytest\b|from[ \t]+_?pytest\b|@pytest\.)`)
	tomlKeyRE      = regexp.MustCompile(`^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_.-]+))\s*=`)
	iniKeyRE       = regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$`)
	toxFactorRE    = regexp.MustCompile(`^[A-Za-z0-9_.,!-]+:\s+`)
)

// pytestSignal says why the project uses pytest, or "". The configuration
// files come first, then the requirements, then a bounded walk for
// conftest.py files and test files that import pytest.
func pytestSignal(dir string) (string, error) {
	pyproject, pyOK, err := readSmall(filepath.Join(dir, "pyproject.toml"))
	if err != nil {
		return "", err
	}
	if pyOK && pytestIniRE.MatchString(pyproject) {
		return "pyproject.toml has [tool.pytest.ini_options]", nil
	}
	if pyOK {
		if why := pyprojectPytest(dir, pyproject); why != "" {
			return why, nil
		}
	}
	if ok, err := isFile(filepath.Join(dir, "pytest.ini")); err != nil || ok {
		return "pytest.ini found", err
	}
	cfg, cfgOK, err := readSmall(filepath.Join(dir, "setup.cfg"))
	if err != nil || (cfgOK && setupCfgRE.MatchString(cfg)) {
		return "setup.cfg has [tool:pytest]", err
	}
	tox, toxOK, err := readSmall(filepath.Join(dir, "tox.ini"))
	if err != nil || (toxOK && toxIniRE.MatchString(tox)) {
		return "tox.ini has [pytest]", err
	}
	for _, c := range []string{"conftest.py", "tests/conftest.py", "test/conftest.py"} {
		if ok, err := isFile(filepath.Join(dir, c)); err != nil || ok {
			return c + " found", err
		}
	}
	if toxOK {
		if why := iniPytest(dir, "tox.ini", tox); why != "" {
			return why, nil
		}
	}
	if cfgOK {
		if why := iniPytest(dir, "setup.cfg", cfg); why != "" {
			return why, nil
		}
	}
	if why := requirementsPytest(dir); why != "" {
		return why, nil
	}
	if text, ok, _ := readSmall(filepath.Join(dir, "setup.py")); ok {
		if loc := pytestQuotedRE.FindStringIndex(text); loc != nil {
			return "setup.py names pytest" + setupPyKey(text[:loc[0]]), nil
		}
		if strings.Contains(text, "pytest-runner") {
			return "setup.py names pytest-runner", nil
		}
	}
	if text, ok, _ := readSmall(filepath.Join(dir, "Pipfile")); ok {
		if why := tomlPytest(text, "Pipfile", func(section, _ string) string {
			if section == "packages" || section == "dev-packages" {
				return "key"
			}
			return ""
		}); why != "" {
			return why, nil
		}
	}
	if text, ok, _ := readSmall(filepath.Join(dir, "noxfile.py")); ok && pytestQuotedRE.MatchString(text) {
		return "noxfile.py runs or installs pytest", nil
	}
	if pyOK && pytestDepRE.MatchString(pyproject) {
		return "pytest in pyproject.toml's dependencies", nil
	}
	return walkPytest(dir), nil
}

// pyprojectPytest finds pytest in pyproject.toml's dependency tables
// (PEP 621 dependencies and extras, PEP 735 dependency groups, poetry's
// groups, pdm's and uv's development dependencies, hatch environments),
// or in a tox configuration it embeds.
func pyprojectPytest(dir, text string) string {
	why := tomlPytest(text, "pyproject.toml", func(section, key string) string {
		switch {
		case section == "project" && (key == "dependencies" || key == "optional-dependencies"),
			section == "project.optional-dependencies", section == "dependency-groups",
			section == "tool.pdm.dev-dependencies",
			section == "tool.uv" && (key == "dev-dependencies" || key == "default-groups"),
			strings.HasPrefix(section, "tool.hatch.envs.") && (key == "dependencies" || key == "extra-dependencies"):
			return "quoted"
		case section == "tool.poetry.dependencies", section == "tool.poetry.dev-dependencies",
			strings.HasPrefix(section, "tool.poetry.group.") && strings.HasSuffix(section, ".dependencies"):
			return "key"
		}
		return ""
	})
	if why != "" {
		return why
	}
	if strings.Contains(text, "legacy_tox_ini") {
		if why := iniPytest(dir, "pyproject.toml's legacy_tox_ini", text); why != "" {
			return why
		}
	}
	return ""
}

// tomlPytest scans a TOML file line by line for pytest in the tables
// where kind(section, key) says how a requirement is written: "quoted"
// (a requirement string in an array) or "key" (pytest = "…").
func tomlPytest(text, file string, kind func(section, key string) string) string {
	section, key := "", ""
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "[\"") && !strings.HasPrefix(t, "['") {
			if end := strings.Index(t, "]"); end > 0 {
				section = strings.Trim(t[:end], "[ ")
				section = strings.ReplaceAll(strings.ReplaceAll(section, `"`, ""), "'", "")
				key = ""
				continue
			}
		}
		if m := tomlKeyRE.FindStringSubmatch(t); m != nil {
			key = m[1] + m[2] + m[3]
		}
		switch kind(section, key) {
		case "quoted":
			if pytestQuotedRE.MatchString(t) {
				return fmt.Sprintf("pytest in %s [%s] %s", file, section, key)
			}
		case "key":
			if pytestKeyRE.MatchString(t) {
				return fmt.Sprintf("pytest in %s [%s]", file, section)
			}
		}
	}
	return ""
}

// setupPyKey names the setup() keyword the text before a requirement
// ends in, as " (tests_require)", or "".
func setupPyKey(before string) string {
	best, at := "", -1
	for _, k := range []string{"tests_require", "extras_require", "setup_requires", "install_requires"} {
		if i := strings.LastIndex(before, k); i > at {
			best, at = k, i
		}
	}
	if best == "" {
		return ""
	}
	return " (" + best + ")"
}

// iniPytest finds pytest in the tox environments ([testenv], [testenv:x])
// of tox.ini (or setup.cfg's, or pyproject's legacy_tox_ini): commands
// running pytest, or pytest in deps (also through deps' -r files); and, in
// setup.cfg, in [options] tests_require or [options.extras_require].
func iniPytest(dir, file, text string) string {
	section, key := "", ""
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' && strings.HasSuffix(t, "]") {
			section, key = strings.TrimSpace(t[1:len(t)-1]), ""
			continue
		}
		value := t
		if line[0] != ' ' && line[0] != '\t' {
			m := iniKeyRE.FindStringSubmatch(t)
			if m == nil {
				key = ""
				continue
			}
			key, value = m[1], strings.TrimSpace(m[2])
		}
		value = toxFactorRE.ReplaceAllString(value, "")
		tox := section == "testenv" || strings.HasPrefix(section, "testenv:") || section == "tox:tox"
		switch {
		case tox && (key == "commands" || key == "commands_pre"):
			if pytestCallRE.MatchString(value) {
				return fmt.Sprintf("%s [%s] %s run pytest", file, section, key)
			}
		case tox && key == "deps":
			if requireTxtRE.MatchString(value) {
				return fmt.Sprintf("pytest in %s [%s] deps", file, section)
			}
			if ref, ok := requirementInclude(value); ok {
				if why := requirementFile(dir, ref, 0, map[string]bool{}); why != "" {
					return why + fmt.Sprintf(" (from %s [%s] deps)", file, section)
				}
			}
		case section == "options" && key == "tests_require", section == "options.extras_require":
			if requireTxtRE.MatchString(value) {
				return fmt.Sprintf("pytest in %s [%s] %s", file, section, key)
			}
		}
	}
	return ""
}

// requirementInclude reads "-r file" (or -c, --requirement=…), with tox's
// {toxinidir}/ removed.
func requirementInclude(line string) (string, bool) {
	for _, p := range []string{"--requirement", "--constraint", "-r", "-c"} {
		if rest, ok := strings.CutPrefix(line, p); ok {
			rest = strings.TrimSpace(strings.TrimPrefix(rest, "="))
			rest = strings.TrimPrefix(rest, "{toxinidir}/")
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0], true
			}
		}
	}
	return "", false
}

// requirementsGlobs are where requirements files are looked for.
var requirementsGlobs = []string{
	"*requirements*.txt", "*requirements*.in", "requirements/*.txt", "requirements/*.in",
	"tests/*requirements*.txt", "test/*requirements*.txt",
}

// requirementsPytest finds pytest in the project's requirements files.
func requirementsPytest(dir string) string {
	seen := map[string]bool{}
	for _, g := range requirementsGlobs {
		files, _ := filepath.Glob(filepath.Join(dir, g))
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			if why := requirementFile(dir, filepath.ToSlash(rel), 0, seen); why != "" {
				return why
			}
		}
	}
	return ""
}

// requirementFile looks for pytest in requirements file rel (relative to
// dir), following its -r and -c includes a few levels deep, never outside
// dir.
func requirementFile(dir, rel string, depth int, seen map[string]bool) string {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if depth > 3 || len(seen) > 40 || seen[rel] || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return ""
	}
	seen[rel] = true
	text, ok := readIn(dir, rel, maxConfig)
	if !ok {
		return ""
	}
	if requireTxtRE.MatchString(text) {
		return "pytest in " + rel
	}
	for line := range strings.SplitSeq(text, "\n") {
		if inc, ok := requirementInclude(strings.TrimSpace(line)); ok {
			if why := requirementFile(dir, path.Join(path.Dir(rel), inc), depth+1, seen); why != "" {
				return why + " (included by " + rel + ")"
			}
		}
	}
	return ""
}

// Bounds of the walk for conftest.py files and test files.
const (
	maxWalkEntries   = 5000
	maxWalkDepth     = 6
	maxTestFiles     = 1000     // test files collected
	maxTestFilesRead = 100      // of them read, the shallowest first
	maxTestFileRead  = 64 << 10 // bytes read of each
)

// otherBuildFiles are the roots of projects that are not Python's, whose
// few Python helper tests do not make the project a pytest one.
var otherBuildFiles = []string{"Cargo.toml", "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
	"settings.gradle.kts", "CMakeLists.txt", "GNUmakefile", "makefile", "Makefile"}

// walkPytest walks the tree (bounded; dependency, virtualenv and hidden
// directories skipped) for a conftest.py below the root, then for test
// files (test_*.py, *_test.py) importing pytest. In a project with another
// build (Makefile, CMake, Cargo, …) and nothing of Python's at its root,
// these are not signals: its make test is the better guess.
func walkPytest(dir string) string {
	if pythonProject(dir) == "" && !pythonRoot(dir) {
		for _, f := range otherBuildFiles {
			if ok, _ := isFile(filepath.Join(dir, f)); ok {
				return ""
			}
		}
	}
	conftest := ""
	var tests []string
	entries := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return fs.SkipDir
		}
		if entries++; entries > maxWalkEntries {
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p == dir {
				return nil
			}
			name := d.Name()
			if skipDir(name) || pythonEnvDir(name) || strings.Count(rel, "/") >= maxWalkDepth {
				return fs.SkipDir
			}
			if ok, _ := isFile(filepath.Join(p, "pyvenv.cfg")); ok {
				return fs.SkipDir // a virtualenv
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		name := d.Name()
		switch {
		case name == "conftest.py":
			if conftest == "" {
				conftest = rel
			}
		case strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py")):
			if len(tests) < maxTestFiles {
				tests = append(tests, rel)
			}
		}
		return nil
	})
	if conftest != "" {
		return conftest + " found"
	}
	slices.SortStableFunc(tests, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for i, rel := range tests {
		if i == maxTestFilesRead {
			break
		}
		if text, _ := readIn(dir, rel, maxTestFileRead); pytestImportRE.MatchString(text) {
			return rel + " imports pytest"
		}
	}
	return ""
}

// pythonEnvDir: directories that hold installed packages, not the
// project's tests.
func pythonEnvDir(name string) bool {
	switch name {
	case "venv", "env", "virtualenv", "site-packages", "dist-packages", "__pypackages__":
		return true
	}
	return false
}

// pythonRoot: the root has Python files of its own (besides those
// pythonProject looks for).
func pythonRoot(dir string) bool {
	for _, f := range []string{"Pipfile", "tox.ini", "manage.py", "noxfile.py"} {
		if ok, _ := isFile(filepath.Join(dir, f)); ok {
			return true
		}
	}
	for _, g := range []string{"*.py", "*requirements*.txt", "requirements/*.txt"} {
		if m, _ := filepath.Glob(filepath.Join(dir, g)); len(m) > 0 {
			return true
		}
	}
	return false
}

// pytestMissing is the pytest command when no python has pytest: it says
// so, with the install hint, as a runner that is not installed (exit 127,
// "No module named pytest"), and runs pytest all the same when the python
// of the tests' environment has it after all.
const pytestMissing = `python3 -c 'import pytest' 2>/dev/null || { echo 'pytest is not installed (No module named pytest): pip install pytest, or apt-get install python3-pytest' >&2; exit 127; }; python3 -m pytest`

// pytestCandidates are tried in order for pytest when the project has no
// tool or virtualenv of its own: a python that imports pytest (Debian's
// /usr/bin/python3 last: python3 may be another one, pyenv's), or a
// pytest program that starts (Debian's is pytest-3).
var pytestCandidates = []struct{ command, python, program string }{
	{"python3 -m pytest", "python3", ""},
	{"python -m pytest", "python", ""},
	{"pytest", "", "pytest"},
	{"pytest-3", "", "pytest-3"},
	{"py.test", "", "py.test"},
	{"/usr/bin/python3 -m pytest", "/usr/bin/python3", ""},
}

// pythonRunner picks how to start module mod (pytest or unittest) and says
// why: uv or poetry with their lockfile and program, a virtualenv in the
// project, else (pytest) the first of pytestCandidates that works, else a
// command saying pytest is not installed; unittest: python3.
func pythonRunner(dir, mod string) (prefix, why string) {
	for _, tool := range []string{"uv", "poetry"} {
		if ok, _ := isFile(filepath.Join(dir, tool+".lock")); ok && installed(tool) {
			why := tool + ".lock and " + tool
			if mod == "pytest" {
				return tool + " run pytest", why
			}
			return tool + " run python -m " + mod, why
		}
	}
	// The virtualenv's python is the tree's own: it is not started here,
	// outside the sandbox, to see whether it has pytest.
	for _, venv := range []string{".venv", "venv"} {
		py := filepath.Join(dir, venv, "bin", "python")
		if _, err := os.Stat(py); err == nil {
			return venv + "/bin/python -m " + mod, "virtualenv " + venv + "/"
		}
	}
	if mod != "pytest" {
		return "python3 -m " + mod, ""
	}
	var tried []string
	for i, c := range pytestCandidates {
		ok := false
		if c.python != "" {
			ok = commandWorks(dir, c.python, "-c", "import pytest")
		} else {
			ok = commandWorks(dir, c.program, "--version")
		}
		if ok {
			if i == 0 {
				return c.command, ""
			}
			what := "the " + c.program + " program"
			if c.python != "" {
				what = c.python
			}
			return c.command, "python3 has no pytest, " + what + " does"
		}
		tried = append(tried, strings.TrimSuffix(c.command, " -m pytest"))
	}
	return pytestMissing, "pytest does not seem to be installed (tried " + strings.Join(tried, ", ") +
		"): pip install pytest, or apt-get install python3-pytest"
}

var (
	probeMu    sync.Mutex
	probeCache = map[string]bool{}
)

// commandWorks reports whether program (on PATH, or a path outside the
// project) runs args successfully within a few seconds. Nothing of the
// project dir runs or is read (it is the model's, and this runs outside
// the sandbox): a program that resolves inside dir (a virtualenv's bin on
// PATH) is not run, PATH entries inside dir are dropped, and the probe runs
// from /. pyenv's shims get the version dir's .python-version names, as
// PYENV_VERSION, only when it is a plain version name (never a path). The
// answer is cached per program, version and environment. A variable, for
// tests.
var commandWorks = func(dir, program string, args ...string) bool {
	path, err := exec.LookPath(program)
	if err != nil || inTree(dir, path) {
		return false
	}
	pyVersion := pythonVersionIn(dir)
	key := strings.Join(append([]string{path}, args...), "\x00") + "\x00" + os.Getenv("PATH") + "\x00" +
		os.Getenv("PYTHONPATH") + "\x00" + os.Getenv("VIRTUAL_ENV") + "\x00" + os.Getenv("PYENV_VERSION") + "\x00" + pyVersion
	probeMu.Lock()
	defer probeMu.Unlock()
	if v, ok := probeCache[key]; ok {
		return v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = "/"
	cmd.Env = append(outsideTree(dir, os.Environ()), "PYTHONDONTWRITEBYTECODE=1")
	if pyVersion != "" {
		cmd.Env = append(cmd.Env, "PYENV_VERSION="+pyVersion)
	}
	ok := cmd.Run() == nil
	if ctx.Err() == nil {
		probeCache[key] = ok // a timeout may be the machine's load: asked again next time
	}
	return ok
}

// pyVersionRE is a plain python version name, as pyenv's versions are.
var pyVersionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// pythonVersionIn is the first version .python-version in dir names, ""
// when there is none or it is not a plain version name ("../../x" would
// make an old pyenv run a python of the tree's).
func pythonVersionIn(dir string) string {
	text, _, _ := readSmall(filepath.Join(dir, ".python-version"))
	v, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if v = strings.TrimSpace(v); !pyVersionRE.MatchString(v) || strings.Contains(v, "..") {
		return ""
	}
	return v
}

// inTree reports whether path resolves inside dir.
func inTree(dir, path string) bool {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true // unknown: nothing is run
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		p = filepath.Clean(path) // missing: where it would be
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// outsideTree is env without PATH entries inside dir, and without
// VIRTUAL_ENV, PYTHONPATH or PYTHONHOME when one of their entries is there.
func outsideTree(dir string, env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			var keep []string
			for _, e := range filepath.SplitList(v) {
				if filepath.IsAbs(e) && !inTree(dir, e) {
					keep = append(keep, e)
				}
			}
			kv = "PATH=" + strings.Join(keep, string(filepath.ListSeparator))
		case "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME":
			if slices.ContainsFunc(filepath.SplitList(v), func(e string) bool { return e != "" && inTree(dir, e) }) {
				continue
			}
		}
		out = append(out, kv)
	}
	return out
}

func detectPytest(dir string) ([]Detected, string, error) {
	signal, err := pytestSignal(dir)
	if err != nil || signal == "" {
		return nil, "", err
	}
	prefix, why := pythonRunner(dir, "pytest")
	// xunit1 has the file and line of each test.
	cmd := prefix + ` -q --junitxml="$ULTRA_REPORT" -o junit_family=xunit1`
	reason := signal
	if why != "" {
		reason += ", " + why
	}
	return []Detected{{Kind: "pytest", Runner: "pytest", Command: cmd, Format: "junit", Report: "$ULTRA_REPORT",
		Reason: reason, sel: selector{how: "pytest", pre: cmd}}}, "", nil
}

// pythonProject says why dir looks like a Python project, or "".
func pythonProject(dir string) string {
	for _, f := range []string{"pyproject.toml", "setup.py", "setup.cfg"} {
		if ok, _ := isFile(filepath.Join(dir, f)); ok {
			return f + " found"
		}
	}
	for _, pat := range []string{"test*.py", "tests/test*.py", "test/test*.py", "*_test.py", "tests/*_test.py"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			rel, _ := filepath.Rel(dir, m[0])
			return filepath.ToSlash(rel) + " found"
		}
	}
	return ""
}

func detectUnittest(dir string) ([]Detected, string, error) {
	why := pythonProject(dir)
	if why == "" {
		return nil, "", nil
	}
	// Runs only when the pytest rule found nothing (detector.after): no
	// pytest signal, and no need to look for one again.
	prefix, pwhy := pythonRunner(dir, "unittest")
	cmd := prefix + " discover -v"
	// discover only enters packages; a tests/ directory without
	// __init__.py is searched as the start directory instead.
	for _, t := range []string{"tests", "test"} {
		if !isDir(filepath.Join(dir, t)) {
			continue
		}
		if ok, _ := isFile(filepath.Join(dir, t, "__init__.py")); !ok {
			if m, _ := filepath.Glob(filepath.Join(dir, "test*.py")); len(m) == 0 {
				cmd += " -s " + t
				why += ", " + t + "/ is not a package"
			}
		}
		break
	}
	reason := why + ", no pytest configuration or other pytest signal (requirements, conftest.py, imports): unittest"
	if pwhy != "" {
		reason += ", " + pwhy
	}
	return []Detected{{Kind: "unittest", Runner: "unittest", Command: cmd, Format: "unittest",
		Reason: reason, sel: selector{how: "unittest", pre: cmd}}}, "", nil
}
