package acp

import (
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
)

// modeWords describe the work modes, ACP's session modes.
var modeWords = map[string]string{
	"chat":     "answer questions about the project, read-only, no branch",
	"plan":     "propose goals and criteria, then stop for acceptance",
	"build":    "plan, build, verify and commit on a branch of its own",
	"review":   "review the uncommitted changes or a run's branch",
	"repair":   "repair what ultra's doctor finds",
	"research": "investigate a question and write a report",
}

// Modes are the work modes as ACP session modes, current the one given.
func Modes(current string) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current)}
	for _, m := range axes.Values[axes.Mode] {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: m, Description: sdk.Ptr(modeWords[m])})
	}
	return st
}

// configAxes are the axes other than the work mode an editor sets as
// session config options: config id → axis.
var configAxes = []struct{ id, axis, name, describe string }{
	{"control", axes.Control, "Run control", "who advances the run: manual (every call waits for you), assisted (pauses after each unit), autonomous"},
	{"permission_profile", axes.Permission, "Permission profile", "what may proceed without approval (denylists and safety rules hold at every profile)"},
	{"model_mode", axes.ModelMode, "Model mode", "speed, cost and reasoning: fast, smart, deep"},
}

// ConfigOptions are the axes other than the work mode as ACP session
// config options, with their values in a.
func ConfigOptions(a axes.Axes) []sdk.SessionConfigOption {
	var out []sdk.SessionConfigOption
	for _, c := range configAxes {
		var opts sdk.SessionConfigSelectOptionsUngrouped
		for _, v := range axes.Values[c.axis] {
			opts = append(opts, sdk.SessionConfigSelectOption{Name: v, Value: sdk.SessionConfigValueId(v)})
		}
		o := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(a.Get(c.axis)), sdk.SessionConfigSelectOptions{Ungrouped: &opts})
		o.Select.Id, o.Select.Name, o.Select.Description = sdk.SessionConfigId(c.id), c.name, sdk.Ptr(c.describe)
		if c.axis == axes.ModelMode {
			o.Select.Category = sdk.Ptr(sdk.SessionConfigOptionCategoryThoughtLevel)
		}
		out = append(out, o)
	}
	return out
}

// configAxis is the axis of a config option id, and checks its value.
func configAxis(id, value string) (string, error) {
	for _, c := range configAxes {
		if c.id == id {
			if !slices.Contains(axes.Values[c.axis], value) {
				return "", fmt.Errorf("%q is not a %s (%s)", value, strings.ToLower(c.name), strings.Join(axes.Values[c.axis], ", "))
			}
			return c.axis, nil
		}
	}
	ids := []string{}
	for _, c := range configAxes {
		ids = append(ids, c.id)
	}
	return "", fmt.Errorf("no config option %q (%s)", id, strings.Join(ids, ", "))
}

// Commands are the slash commands of the command table an editor offers
// (available_commands_update).
func Commands() []sdk.AvailableCommand {
	var out []sdk.AvailableCommand
	for i := range command.Table {
		c := &command.Table[i]
		if !c.On(command.ACP) {
			continue
		}
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Summary}
		if hint := strings.TrimSpace(c.Args); hint != "" || len(c.Flags) > 0 {
			if len(c.Flags) > 0 {
				hint = strings.TrimSpace(hint + " [flags]")
			}
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: hint}}
		}
		out = append(out, ac)
	}
	return out
}
