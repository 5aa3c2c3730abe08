package doctor

import (
	"os"
	"os/exec"
	"strings"

	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

// Environment is what ultra needs around the repository, for people to
// read: what contains the model's commands, which profiles can start, git,
// the gate key, and the programs criteria and tests use.
type Environment struct {
	Sandbox  sandbox.Status `json:"sandbox"`
	Landlock int            `json:"landlock_abi"` // 0: none (Go test binaries then share the go command's work directory)
	// GoCache is the person's Go build cache ("" when go is missing, the
	// cache is off or not made yet): read-only to everything contained.
	GoCache  string            `json:"go_cache"`
	Profiles map[string]string `json:"profiles"` // profile → "contained", "uncontained" or "refused"
	Git      string            `json:"git"`
	GateKey  string            `json:"gate_key"`
	Tools    map[string]string `json:"tools"` // test runners found (path) or ""
	// Channels are the programs criteria of the tmux, browser and desktop
	// channels need (path, or "" when missing: such criteria are then
	// BLOCKED); the desktop's are "desktop <program>" (desktop Xvfb,
	// desktop xdotool, desktop import, desktop tesseract).
	Channels map[string]string `json:"channels"`
}

// Runners are the test runners the environment section looks for.
var Runners = []string{"go", "node", "npm", "python3", "pytest", "cargo", "mvn", "gradle", "cmake", "make"}

// dispatchEnvironment is what of the machine blocks verified work, found
// cheaply for the health check before every run: git, and a gate key
// others can read (the sandbox is the permission profile's to demand).
func dispatchEnvironment() EnvObs {
	var o EnvObs
	if _, err := exec.LookPath("git"); err != nil {
		o.GitMissing = true
	}
	if p, err := gatefile.KeyPath(); err == nil {
		if fi, err := os.Stat(p); err == nil {
			o.GateKey, o.GateKeyMode = p, uint32(fi.Mode().Perm())
		}
	}
	return o
}

// gatherEnvironment probes the machine.
func gatherEnvironment() (Environment, EnvObs) {
	e := Environment{Sandbox: sandbox.Probe(), Landlock: sandbox.LandlockABI(), GoCache: sandbox.GoCache(), Profiles: map[string]string{}, Tools: map[string]string{}, Channels: map[string]string{}}
	var o EnvObs
	e.Channels["tmux"], _ = exec.LookPath("tmux")
	e.Channels["browser"] = check.FindChromium("")
	for _, t := range check.DesktopTools() {
		e.Channels["desktop "+t.Name] = t.Path
	}
	for name, p := range policy.Profiles {
		switch {
		case e.Sandbox.Available:
			e.Profiles[name] = "contained"
		case p.NeedsSandbox:
			e.Profiles[name] = "refused"
		default:
			e.Profiles[name] = "uncontained"
		}
	}
	if !e.Sandbox.Available {
		o.SandboxProblem, o.SandboxHint = e.Sandbox.Problem, e.Sandbox.Hint
		if o.SandboxProblem == "" {
			o.SandboxProblem = "none found"
		}
	}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		e.Git = strings.TrimSpace(string(out))
	} else {
		o.GitMissing = true
	}
	if p, err := gatefile.KeyPath(); err == nil {
		if fi, err := os.Stat(p); err == nil {
			e.GateKey = p + " (mode " + fi.Mode().Perm().String() + ")"
			o.GateKey, o.GateKeyMode = p, uint32(fi.Mode().Perm())
		} else {
			e.GateKey = p + " (made on the first run)"
		}
	}
	for _, t := range Runners {
		path, _ := exec.LookPath(t)
		e.Tools[t] = path
	}
	return e, o
}
