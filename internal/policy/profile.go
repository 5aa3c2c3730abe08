package policy

import "fmt"

// Profile is what a permission profile lets the model's processes do,
// enforced by the sandbox (package sandbox), and which tools it offers.
type Profile struct {
	Name string
	// WriteWork: the run's worktree is writable (else read-only).
	WriteWork bool
	// Network: commands reach the network (else only their own loopback).
	Network bool
	// NeedsSandbox: a run may not start without a sandbox.
	NeedsSandbox bool
	// Tools this profile never offers (nor runs).
	Denied map[string]string // tool → why
}

// Profiles are the four permission profiles. The test gate runs without
// the network whatever the profile: a verdict must not depend on it.
var Profiles = map[string]Profile{
	"restricted": {Name: "restricted", NeedsSandbox: true, Denied: map[string]string{
		"write": "it is read-only: nothing in the worktree may change",
		"edit":  "it is read-only: nothing in the worktree may change",
	}},
	"normal":       {Name: "normal", WriteWork: true, NeedsSandbox: true},
	"trusted":      {Name: "trusted", WriteWork: true, Network: true},
	"unrestricted": {Name: "unrestricted", WriteWork: true, Network: true},
}

// ProfileOf returns the named profile; an unknown name gets restricted's
// rules (fail closed) and an error.
func ProfileOf(name string) (Profile, error) {
	if p, ok := Profiles[name]; ok {
		return p, nil
	}
	return Profiles["restricted"], fmt.Errorf("unknown permission profile %q", name)
}

// ToolPermitted is the permission profile's decision on whether a run may
// use a tool at all, whatever its phase. It is the one seam where profiles
// are enforced on tools: the agent asks it both when it builds the tools
// offered to the model and when it guards a call.
func ToolPermitted(profile, tool string) (ok bool, reason string) {
	p, err := ProfileOf(profile)
	if err != nil {
		return false, err.Error()
	}
	if why, denied := p.Denied[tool]; denied {
		return false, why
	}
	return true, ""
}
