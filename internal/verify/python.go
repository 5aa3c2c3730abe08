package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

var (
	pytestIniRE  = regexp.MustCompile(`(?m)^\s*\[tool\.pytest\.ini_options\]`)
	pytestDepRE  = regexp.MustCompile(`(?m)["']pytest(?:[\s<>=~!\[;,"']|$)|^\s*pytest\s*=`)
	setupCfgRE   = regexp.MustCompile(`(?m)^\s*\[tool:pytest\]`)
	toxIniRE     = regexp.MustCompile(`(?m)^\s*\[pytest\]`)
	requireTxtRE = regexp.MustCompile(`(?m)^\s*pytest(?:[\s<>=~!\[;]|$)`)
)

// pytestSignal says why the project uses pytest, or "".
func pytestSignal(dir string) (string, error) {
	text, ok, err := readSmall(filepath.Join(dir, "pyproject.toml"))
	if err != nil {
		return "", err
	}
	if ok && pytestIniRE.MatchString(text) {
		return "pyproject.toml has [tool.pytest.ini_options]", nil
	}
	if ok && pytestDepRE.MatchString(text) {
		return "pytest in pyproject.toml's dependencies", nil
	}
	if ok, err := isFile(filepath.Join(dir, "pytest.ini")); err != nil || ok {
		return "pytest.ini found", err
	}
	if text, ok, err := readSmall(filepath.Join(dir, "setup.cfg")); err != nil || (ok && setupCfgRE.MatchString(text)) {
		return "setup.cfg has [tool:pytest]", err
	}
	if text, ok, err := readSmall(filepath.Join(dir, "tox.ini")); err != nil || (ok && toxIniRE.MatchString(text)) {
		return "tox.ini has [pytest]", err
	}
	for _, c := range []string{"conftest.py", "tests/conftest.py", "test/conftest.py"} {
		if ok, err := isFile(filepath.Join(dir, c)); err != nil || ok {
			return c + " found", err
		}
	}
	reqs, _ := filepath.Glob(filepath.Join(dir, "requirements*.txt"))
	for _, r := range reqs {
		if text, ok, _ := readSmall(r); ok && requireTxtRE.MatchString(text) {
			return "pytest in " + filepath.Base(r), nil
		}
	}
	return "", nil
}

// pythonRunner picks how to start module mod (pytest or unittest) and says
// why: uv or poetry with their lockfile and program, a virtualenv in the
// project, else the first python3 that has the module (the pytest program
// for pytest), else plain python3 (which will report the module missing).
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
	for _, venv := range []string{".venv", "venv"} {
		py := filepath.Join(dir, venv, "bin", "python")
		if _, err := os.Stat(py); err == nil {
			return venv + "/bin/python -m " + mod, "virtualenv " + venv + "/"
		}
	}
	if mod != "pytest" {
		return "python3 -m " + mod, ""
	}
	if hasPythonModule("python3", "pytest") {
		return "python3 -m pytest", ""
	}
	for _, prog := range []string{"pytest", "pytest-3"} {
		if installed(prog) {
			return prog, "python3 has no pytest, the " + prog + " program does"
		}
	}
	return "python3 -m pytest", "pytest does not seem to be installed"
}

var (
	pyModMu    sync.Mutex
	pyModCache = map[string]bool{}
)

// hasPythonModule reports whether the python program on PATH can import
// mod; the answer is cached per program path.
func hasPythonModule(python, mod string) bool {
	path, err := exec.LookPath(python)
	if err != nil {
		return false
	}
	key := path + "\x00" + mod + "\x00" + os.Getenv("PATH") + os.Getenv("PYTHONPATH") + os.Getenv("VIRTUAL_ENV")
	pyModMu.Lock()
	defer pyModMu.Unlock()
	if v, ok := pyModCache[key]; ok {
		return v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-c", "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)", mod)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	ok := cmd.Run() == nil
	pyModCache[key] = ok
	return ok
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
	if signal, err := pytestSignal(dir); err != nil || signal != "" {
		return nil, "", err // the pytest rule's
	}
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
	reason := why + ", no pytest configuration: unittest"
	if pwhy != "" {
		reason += ", " + pwhy
	}
	return []Detected{{Kind: "unittest", Runner: "unittest", Command: cmd, Format: "unittest",
		Reason: reason, sel: selector{how: "unittest", pre: cmd}}}, "", nil
}
