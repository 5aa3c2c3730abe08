package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
)

// The option ids of every permission request: ACP's four kinds.
const (
	AllowOnce    = "allow_once"
	AllowAlways  = "allow_always"
	RejectOnce   = "reject_once"
	RejectAlways = "reject_always"
)

// deniedReason is what the model reads of a call a person refused from
// the editor.
const deniedReason = "denied by the person in the editor"

func options(allowOnce, allowAlways, rejectOnce, rejectAlways string) []sdk.PermissionOption {
	return []sdk.PermissionOption{
		{Kind: sdk.PermissionOptionKindAllowOnce, Name: allowOnce, OptionId: AllowOnce},
		{Kind: sdk.PermissionOptionKindAllowAlways, Name: allowAlways, OptionId: AllowAlways},
		{Kind: sdk.PermissionOptionKindRejectOnce, Name: rejectOnce, OptionId: RejectOnce},
		{Kind: sdk.PermissionOptionKindRejectAlways, Name: rejectAlways, OptionId: RejectAlways},
	}
}

// CallOptions are the answers to a tool call that waits for a person
// (manual control, or a safety rule that asks): the goals call is the
// plan itself.
func CallOptions(w event.ApprovalData) []sdk.PermissionOption {
	if w.Tool == "goals" {
		return PlanOptions()
	}
	return options("Allow", "Allow "+w.Tool+" for the rest of the run", "Deny", "Deny "+w.Tool+" for the rest of this session")
}

// PlanOptions are the answers to a plan that waits for acceptance.
func PlanOptions() []sdk.PermissionOption {
	return options("Accept the plan", "Accept and run autonomously", "Revise it: type what to change", "Reject it: cancel the run")
}

// Answer is what a person's choice does: the ultra commands that carry
// it out, in order.
type Answer struct {
	Argv [][]string
	// EndTurn: the prompt turn ends here (the person types what to change
	// in the plan; their next prompt resumes the run with it).
	EndTurn bool
	// DenyTool: a tool the session refuses from now on, without asking.
	DenyTool string
	Say      string
}

// argvOf is the CLI form of slash command name as the command table
// builds it (the parity test holds the table to the CLI).
func argvOf(name, run string, args []string, flags map[string]string) ([]string, error) {
	c, ok := command.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no command /%s", name)
	}
	return command.Invocation{Cmd: c, Args: args, Flags: flags}.CLIArgs(run)
}

// CallAnswer is the answer option to the call w of run.
func CallAnswer(run string, w event.ApprovalData, option string) (Answer, error) {
	call := map[string]string{"call": w.CallID}
	one := func(name string, args []string, flags map[string]string, say string) (Answer, error) {
		argv, err := argvOf(name, run, args, flags)
		return Answer{Argv: [][]string{argv}, Say: say}, err
	}
	if w.Tool == "goals" {
		switch option {
		case AllowOnce:
			return one("approve", nil, call, "plan accepted")
		case AllowAlways:
			a, err := one("approve", nil, call, "plan accepted; the run goes on autonomously")
			if err != nil {
				return a, err
			}
			auto, err := argvOf("autonomous", run, nil, map[string]string{"reason": "plan accepted from the editor to run autonomously"})
			a.Argv = append(a.Argv, auto)
			return a, err
		case RejectOnce:
			return one("deny", []string{"the person rejected this plan in the editor; propose another"}, call, "plan denied: the model proposes again")
		case RejectAlways:
			return one("cancel", nil, map[string]string{"reason": "plan rejected in the editor"}, "plan rejected: the run is cancelled")
		}
		return Answer{}, fmt.Errorf("unknown permission option %q", option)
	}
	switch option {
	case AllowOnce:
		return one("approve", nil, call, "")
	case AllowAlways:
		flags := map[string]string{"call": w.CallID, "for-run": "true"}
		return one("approve", nil, flags, w.Tool+" is allowed for the rest of the run")
	case RejectOnce:
		return one("deny", []string{deniedReason}, call, "")
	case RejectAlways:
		// The run refuses the tool from now on, whatever its run control
		// becomes (ultra approve --deny --for-run); the session also
		// refuses it in the runs it starts later.
		flags := map[string]string{"call": w.CallID, "for-run": "true"}
		a, err := one("deny", []string{deniedReason + " (" + w.Tool + " is refused for the rest of this session)"}, flags, w.Tool+" is denied for the rest of this session")
		a.DenyTool = w.Tool
		return a, err
	}
	return Answer{}, fmt.Errorf("unknown permission option %q", option)
}

// PlanAnswer is the answer option to the plan run waits on.
func PlanAnswer(run, option string) (Answer, error) {
	one := func(name string, flags map[string]string, say string) (Answer, error) {
		argv, err := argvOf(name, run, nil, flags)
		return Answer{Argv: [][]string{argv}, Say: say}, err
	}
	switch option {
	case AllowOnce:
		return one("approve", nil, "plan accepted")
	case AllowAlways:
		return one("approve", map[string]string{"autonomous": "true"}, "plan accepted; the run goes on autonomously")
	case RejectOnce:
		return Answer{EndTurn: true, Say: "The plan waits: send what to change and the run plans again with it (or `/cancel`)."}, nil
	case RejectAlways:
		return one("cancel", map[string]string{"reason": "plan rejected in the editor"}, "plan rejected: the run is cancelled")
	}
	return Answer{}, fmt.Errorf("unknown permission option %q", option)
}

// AutoDenied is the answer to a call of a tool the session refuses
// (a person chose reject_always for it before).
func AutoDenied(run string, w event.ApprovalData) (Answer, error) {
	argv, err := argvOf("deny", run, []string{deniedReason + " (" + w.Tool + " is refused for the rest of this session)"}, map[string]string{"call": w.CallID})
	return Answer{Argv: [][]string{argv}, Say: w.Tool + " call denied: the session refuses " + w.Tool}, err
}
