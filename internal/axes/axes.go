// Package axes holds the five orthogonal axes of a run: work mode, run
// control, permission profile, model mode and surface. It is pure.
package axes

import (
	"fmt"
	"slices"
	"strings"
)

// Axes is the value of all five axes for one run. None implies another.
type Axes struct {
	Mode       string `json:"mode"`               // workMode
	Control    string `json:"control"`            // runControl
	Permission string `json:"permission_profile"` // permissionProfile
	ModelMode  string `json:"model_mode"`         // modelMode
	Surface    string `json:"surface"`            // surface
}

// Axis names, as used in flags, transitions and events.
const (
	Mode       = "mode"
	Control    = "control"
	Permission = "permission_profile"
	ModelMode  = "model_mode"
	Surface    = "surface"
)

// Values lists the legal values of every axis.
var Values = map[string][]string{
	Mode:       {"chat", "plan", "build", "review", "repair", "research"},
	Control:    {"manual", "assisted", "autonomous"},
	Permission: {"restricted", "normal", "trusted", "unrestricted"},
	ModelMode:  {"fast", "smart", "deep"},
	Surface:    {"tui", "web", "headless", "rpc"},
}

// Names lists the axes in display order.
var Names = []string{Mode, Control, Permission, ModelMode, Surface}

// Default is what `ultra run` starts with.
var Default = Axes{Mode: "build", Control: "autonomous", Permission: "normal", ModelMode: "smart", Surface: "headless"}

// Get returns the value of axis name.
func (a Axes) Get(name string) string {
	switch name {
	case Mode:
		return a.Mode
	case Control:
		return a.Control
	case Permission:
		return a.Permission
	case ModelMode:
		return a.ModelMode
	case Surface:
		return a.Surface
	}
	return ""
}

// Set returns a copy of a with axis name set to value, after checking both.
func (a Axes) Set(name, value string) (Axes, error) {
	value = strings.ToLower(strings.TrimSpace(value))
	legal, ok := Values[name]
	if !ok {
		return a, fmt.Errorf("unknown axis %q (axes: %s)", name, strings.Join(Names, ", "))
	}
	if !slices.Contains(legal, value) {
		return a, fmt.Errorf("invalid %s %q (one of: %s)", name, value, strings.Join(legal, ", "))
	}
	switch name {
	case Mode:
		a.Mode = value
	case Control:
		a.Control = value
	case Permission:
		a.Permission = value
	case ModelMode:
		a.ModelMode = value
	case Surface:
		a.Surface = value
	}
	return a, nil
}

// Validate checks every axis holds a legal value, exactly as spelled.
func (a Axes) Validate() error {
	n, err := a.Normalize()
	if err != nil {
		return err
	}
	if n != a {
		return fmt.Errorf("axes %s are not in canonical form (%s)", a, n)
	}
	return nil
}

// Normalize checks every axis and returns it in canonical form (lower
// case, trimmed).
func (a Axes) Normalize() (Axes, error) {
	var err error
	for _, n := range Names {
		if a, err = a.Set(n, a.Get(n)); err != nil {
			return a, err
		}
	}
	return a, nil
}

// Change is one axis moving from one value to another.
type Change struct {
	Axis string `json:"axis"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Diff lists the axes whose values differ from a to b, in display order.
func Diff(a, b Axes) []Change {
	var out []Change
	for _, n := range Names {
		if a.Get(n) != b.Get(n) {
			out = append(out, Change{Axis: n, From: a.Get(n), To: b.Get(n)})
		}
	}
	return out
}

// String is the at-a-glance form: build | autonomous | trusted | smart | headless.
func (a Axes) String() string {
	return strings.Join([]string{a.Mode, a.Control, a.Permission, a.ModelMode, a.Surface}, " | ")
}

// AcceptsPlanWithoutPerson reports that the run control lets a plan be
// accepted without a person's approval.
func (a Axes) AcceptsPlanWithoutPerson() bool { return a.Control == "autonomous" }

// Steering scopes: when a change of axes takes effect in a live run. A
// tool call that runs is never changed: every scope applies at a point
// between tool calls.
const (
	ScopeNow       = "now"                // at once: a model answer in flight is set aside and asked again
	ScopeAfterTool = "after-current-tool" // at the next point between tool calls or model requests
	ScopeAfterUnit = "after-current-unit" // when the current unit (a phase) ends
	ScopeMilestone = "next-milestone"     // at the next milestone: a verification, a goal, a plan accepted, a review
)

// Scopes lists the steering scopes.
var Scopes = []string{ScopeNow, ScopeAfterTool, ScopeAfterUnit, ScopeMilestone}

// CheckScope refuses an unknown scope ("" is now).
func CheckScope(scope string) error {
	if scope != "" && !slices.Contains(Scopes, scope) {
		return fmt.Errorf("unknown scope %q (one of: %s)", scope, strings.Join(Scopes, ", "))
	}
	return nil
}

// Steer is a with the axes of want (axis → value) changed, after
// checking each; the surface is where a person watches from, not
// something to steer.
func (a Axes) Steer(want map[string]string) (Axes, error) {
	if len(want) == 0 {
		return a, fmt.Errorf("nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)")
	}
	next := a
	for _, name := range Names { // in display order, so errors are stable
		v, ok := want[name]
		if !ok {
			continue
		}
		if name == Surface {
			return a, fmt.Errorf("the surface is where a person watches the run from, not something to steer")
		}
		var err error
		if next, err = next.Set(name, v); err != nil {
			return a, err
		}
	}
	for name := range want {
		if !slices.Contains(Names, name) {
			return a, fmt.Errorf("unknown axis %q (axes: %s)", name, strings.Join(Names, ", "))
		}
	}
	return next, nil
}

// ClaudePermissionMode is Claude Code's word for a run's axes, as its
// print mode's init message and its hooks' permission_mode say it: plan
// for a run that only plans, default under manual control (every call
// waits for a person), acceptEdits otherwise (changes go through without
// asking; ultra's phase tables, profile and sandbox still decide, and
// nothing is ever bypassed).
func (a Axes) ClaudePermissionMode() string {
	switch {
	case a.Mode == "plan":
		return "plan"
	case a.Control == "manual":
		return "default"
	}
	return "acceptEdits"
}
