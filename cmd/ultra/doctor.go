package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

// doctorReport is what `ultra doctor` finds.
type doctorReport struct {
	Sandbox  sandbox.Status    `json:"sandbox"`
	Landlock int               `json:"landlock_abi"` // 0: none (Go's build cache is then read-only to the gate's tests)
	Profiles map[string]string `json:"profiles"`     // profile → "contained", "uncontained" or "refused"
	Git      string            `json:"git"`
	GateKey  string            `json:"gate_key"`
	Tools    map[string]string `json:"tools"` // test runners found (path) or ""
	// Channels are the programs criteria of the tmux and browser channels
	// need (path, or "" when missing: such criteria are then BLOCKED).
	Channels map[string]string `json:"channels"`
	Problems []string          `json:"problems,omitempty"`
}

// doctorRunners are the test runners doctor looks for.
var doctorRunners = []string{"go", "node", "npm", "python3", "pytest", "cargo", "mvn", "gradle", "cmake", "make"}

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check what contains the model's commands here, and what else ultra needs",
		Long: "ultra doctor reports whether the model's commands and the tests can run in a sandbox here\n" +
			"(bubblewrap), which permission profiles can therefore start, where the gate key is, and\n" +
			"which test runners are installed. It exits 1 when the sandbox or git is missing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := diagnose()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				_ = enc.Encode(r)
			} else {
				printDoctor(cmd, r)
			}
			if len(r.Problems) > 0 {
				return &exitError{code: agent.ExitError, err: fmt.Errorf("%d problem(s): %s", len(r.Problems), strings.Join(r.Problems, "; "))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func diagnose() doctorReport {
	r := doctorReport{Sandbox: sandbox.Probe(), Landlock: sandbox.LandlockABI(), Profiles: map[string]string{}, Tools: map[string]string{}, Channels: map[string]string{}}
	r.Channels["tmux"], _ = exec.LookPath("tmux")
	r.Channels["browser"] = check.FindChromium("")
	for name, p := range policy.Profiles {
		switch {
		case r.Sandbox.Available:
			r.Profiles[name] = "contained"
		case p.NeedsSandbox:
			r.Profiles[name] = "refused"
		default:
			r.Profiles[name] = "uncontained"
		}
	}
	if !r.Sandbox.Available {
		r.Problems = append(r.Problems, "no sandbox: "+r.Sandbox.Problem)
	}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		r.Git = strings.TrimSpace(string(out))
	} else {
		r.Problems = append(r.Problems, "git is not installed")
	}
	if p, err := gatefile.KeyPath(); err == nil {
		if fi, err := os.Stat(p); err == nil {
			r.GateKey = fmt.Sprintf("%s (mode %v)", p, fi.Mode().Perm())
			if fi.Mode().Perm()&0o077 != 0 {
				r.Problems = append(r.Problems, "the gate key "+p+" is readable by others: chmod 600 it")
			}
		} else {
			r.GateKey = p + " (made on the first run)"
		}
	}
	for _, t := range doctorRunners {
		path, _ := exec.LookPath(t)
		r.Tools[t] = path
	}
	return r
}

func printDoctor(cmd *cobra.Command, r doctorReport) {
	w := cmd.OutOrStdout()
	if r.Sandbox.Available {
		fmt.Fprintf(w, "sandbox    ok: %s %s (%s)\n", r.Sandbox.Mechanism, r.Sandbox.Version, r.Sandbox.Path)
		fmt.Fprintln(w, "           the model's commands and the tests run in their own user, PID and IPC namespaces (and network, but for trusted and unrestricted);")
		fmt.Fprintln(w, "           only the run's worktree is writable; ultra's state, config, keys and your secrets are hidden")
	} else {
		fmt.Fprintf(w, "sandbox    MISSING: %s\n", r.Sandbox.Problem)
		fmt.Fprintf(w, "           fix: %s\n", r.Sandbox.Hint)
	}
	if r.Landlock > 0 {
		fmt.Fprintf(w, "landlock   ok: ABI %d (the gate's Go tests cannot write the build cache the go command fills)\n", r.Landlock)
	} else {
		fmt.Fprintln(w, "landlock   none: the gate's Go tests run with the build cache read-only (slower: nothing they compile is kept)")
	}
	for _, name := range []string{"restricted", "normal", "trusted", "unrestricted"} {
		fmt.Fprintf(w, "profile    %-12s %s\n", name, r.Profiles[name])
	}
	if r.Git != "" {
		fmt.Fprintf(w, "git        ok: %s\n", r.Git)
	} else {
		fmt.Fprintln(w, "git        MISSING: install git")
	}
	fmt.Fprintf(w, "gate key   %s\n", r.GateKey)
	for _, ch := range []struct{ name, what, fix string }{{"tmux", "tmux", "apt-get install tmux"}, {"browser", "chromium", "apt-get install chromium"}} {
		if p := r.Channels[ch.name]; p != "" {
			fmt.Fprintf(w, "criteria   %-8s ok: %s\n", ch.name, p)
		} else {
			fmt.Fprintf(w, "criteria   %-8s no %s: such criteria are BLOCKED (%s)\n", ch.name, ch.what, ch.fix)
		}
	}
	var found, missing []string
	for _, t := range doctorRunners {
		if r.Tools[t] != "" {
			found = append(found, t)
		} else {
			missing = append(missing, t)
		}
	}
	fmt.Fprintf(w, "runners    found: %s\n", strings.Join(found, " "))
	if len(missing) > 0 {
		fmt.Fprintf(w, "           not found: %s\n", strings.Join(missing, " "))
	}
}
