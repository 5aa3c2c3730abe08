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
	rank         int
}

// Profiles are the four permission profiles, from least to most allowed.
// The test gate runs without the network whatever the profile: a verdict
// must not depend on it.
var Profiles = map[string]Profile{
	"restricted":   {Name: "restricted", NeedsSandbox: true, rank: 0},
	"normal":       {Name: "normal", WriteWork: true, NeedsSandbox: true, rank: 1},
	"trusted":      {Name: "trusted", WriteWork: true, Network: true, rank: 2},
	"unrestricted": {Name: "unrestricted", WriteWork: true, Network: true, rank: 3},
}

// ToolProfiles is the least profile each tool needs: a tool not listed
// needs none (restricted runs it). bash runs in every profile: the
// sandbox makes it read-only under restricted.
var ToolProfiles = map[string]string{
	"write": "normal",
	"edit":  "normal",
	// webfetch reaches the network: only profiles whose commands may.
	"webfetch": "trusted",
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
	if least, ok := ToolProfiles[tool]; ok && p.rank < Profiles[least].rank {
		return false, fmt.Sprintf("%s needs at least the %s profile; this run's is read-only", tool, least)
	}
	return true, ""
}

// AtLeast says profile p allows at least what need does.
func AtLeast(p, need Profile) bool { return p.rank >= need.rank }
