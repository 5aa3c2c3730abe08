package command

import (
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/axes"
)

// CLIOnly lists the top-level commands of the CLI that have no slash
// form, each with the reason.
var CLIOnly = map[string]string{
	"run":      "in the TUI, typing a task starts a run",
	"plan":     "in the TUI, /mode plan and then a task starts a run that stops at its plan",
	"chat":     "the TUI is itself a conversation: /mode chat and then a question",
	"research": "in the TUI, /mode research and then a question starts an investigation",
	"runs":     "the TUI lists runs in its tasks panel (/tasks, /tasks --all)",
	"report":   "a report of tokens and cost for accounting and scripts; /status shows one run's",
	"verify":   "runs a directory's tests outside any run, for scripts and CI",
	"gate":     "waiving the tests is a deliberate act kept to the command line; /status shows the last verification",
	"gc":       "housekeeping of finished runs' worktrees, kept to the command line",
	"dev":      "tools for developing ultra itself (the scripted model server, one tool outside a run)",
	"mcp":      "MCP servers are configured in files; listing and testing them is kept to the command line",
	"skills":   "skills are folders of files; listing and checking them is kept to the command line (a run's prompt lists them)",
	"serve":    "starts the HTTP API and web page themselves: another surface, not a command of one",
	"acp":      "the Agent Client Protocol agent an editor starts (ultra acp); its slash commands are this table's",
	"schedule": "schedules are set up from the command line (or a script); ultra tasks lists them with their next dispatch",
	"worker":   "the daemon that dispatches schedules: a process to keep running (ultra serve runs one too), not a command of a surface",
	"submit":   "queues a run for a fleet's workers on other machines; in the TUI, typing a task starts a run here",
}

// Flags shared by several commands.
var (
	flagAutonomous = Flag{Name: "autonomous", Usage: "--control autonomous: the run goes on by itself", to: axes.Control + "=autonomous"}
	flagAssisted   = Flag{Name: "assisted", Usage: "--control assisted: the run pauses after each unit", to: axes.Control + "=assisted"}
	flagManual     = Flag{Name: "manual", Usage: "--control manual: every tool call waits for a person", to: axes.Control + "=manual"}
	flagMode       = Flag{Name: "mode", Value: true, Usage: "work mode", Values: axes.Values[axes.Mode], noun: "work mode"}
	flagControl    = Flag{Name: "control", Value: true, Usage: "run control", Values: axes.Values[axes.Control], noun: "run control", arg: "CONTROL"}
	flagPermission = Flag{Name: "permission-profile", Value: true, Usage: "permission profile", Values: axes.Values[axes.Permission], noun: "permission profile", arg: "PROFILE"}
	flagModelMode  = Flag{Name: "model-mode", Value: true, Usage: "model mode", Values: axes.Values[axes.ModelMode], noun: "model mode", arg: "MODEL_MODE"}
	flagScope      = Flag{Name: "scope", Value: true, Usage: "when a live run applies it (default after-current-tool)", Values: axes.Scopes, noun: "steering scope"}
	flagReason     = Flag{Name: "reason", Value: true, Usage: "why (recorded)", arg: "TEXT"}
	flagRun        = Flag{Name: "run", Value: true, Usage: "the run (default: the one shown)", arg: "ID", to: "-"}
)

// axisFlags maps the CLI's axis flags to the axis names of internal/axes.
var axisFlags = map[string]string{
	"mode":               axes.Mode,
	"control":            axes.Control,
	"permission-profile": axes.Permission,
	"model-mode":         axes.ModelMode,
}

// axisCommand is /mode, /control, /permission-profile or /model-mode:
// the value of one axis, the others as flags.
func axisCommand(flag Flag, name, summary string) Command {
	fl := []Flag{}
	if flag.Name != "control" {
		fl = append(fl, flagAutonomous, flagAssisted, flagManual)
	}
	for _, f := range []Flag{flagMode, flagControl, flagPermission, flagModelMode} {
		if f.Name != flag.Name {
			fl = append(fl, f)
		}
	}
	fl = append(fl, flagScope, flagReason, flagRun)
	return Command{
		Name: name, Args: flag.Placeholder(), Summary: summary,
		Flags: fl, CLI: []string{"steer"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Axes: true,
		ArgValues: flag.Values, args: argAxis, argFlag: flag.Name, argNoun: flag.noun,
		check: oneControl,
	}
}

// Table lists every command, in the order /help lists them.
var Table = []Command{
	axisCommand(flagMode, "mode", "Set the work mode (chat, plan, build, review, repair, research); other axes as flags"),
	axisCommand(flagControl, "control", "Set the run control (manual, assisted, autonomous)"),
	axisCommand(flagPermission, "permission-profile", "Set the permission profile (restricted, normal, trusted, unrestricted)"),
	axisCommand(flagModelMode, "model-mode", "Set the model mode (fast, smart, deep)"),
	{
		Name: "steer", Args: "[RUN]", Summary: "Change several axes of a run at once, at a scope",
		Flags: []Flag{flagMode, flagControl, flagAutonomous, flagAssisted, flagManual, flagPermission, flagModelMode, flagScope, flagReason},
		CLI:   []string{"steer"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Axes: true,
		args: argRun, argNoun: "run",
		check: func(inv Invocation) error {
			if err := oneControl(inv); err != nil {
				return err
			}
			for _, f := range inv.Cmd.Flags {
				if _, ok := inv.Flags[f.Name]; ok && (axisFlags[f.Name] != "" || strings.HasPrefix(f.to, axes.Control+"=")) {
					return nil
				}
			}
			return fmt.Errorf("/steer: nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)")
		},
	},
	{
		Name: "autonomous", Args: "[RUN]", Summary: "Let a run go on by itself (run control autonomous)",
		Flags: []Flag{flagScope, flagReason},
		CLI:   []string{"autonomous"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Drives: true, Axes: true,
		args: argRun, argNoun: "run", sets: map[string]string{axes.Control: "autonomous"},
	},
	{
		Name: "next", Args: "[RUN]", Summary: "Let a paused or assisted run go on for one unit",
		Flags: []Flag{flagReason},
		CLI:   []string{"next"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Drives: true, Events: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "pause", Args: "[RUN]", Summary: "Pause a live run at its next safe point (/next or /resume goes on)",
		Flags: []Flag{flagReason},
		CLI:   []string{"pause"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "stop", Args: "[RUN]", Summary: "Stop a run at its next safe point until a person resumes it",
		Flags: []Flag{flagReason},
		CLI:   []string{"stop"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "approve", Args: "[RUN]", Summary: "Accept the plan a run waits on, or allow the tool call it waits on",
		Flags: []Flag{
			{Name: "call", Value: true, Usage: "the tool call to allow (default: the one the run waits on)", arg: "ID"},
			{Name: "for-run", Usage: "allow the call's tool for the rest of the run"},
			{Name: "read-only", Usage: "allow the call and every read-only call (read, glob, grep) for the rest of the run"},
			{Name: "autonomous", Usage: "accept the plan and let it run autonomously"},
			{Name: "permission-profile", Value: true, Usage: "with an accepted plan: the permission profile it runs with", Values: axes.Values[axes.Permission], noun: "permission profile", arg: "PROFILE"},
		},
		CLI: []string{"approve"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Drives: true, Events: true,
		args: argRun, argNoun: "run",
		check: func(inv Invocation) error {
			_, call := inv.Flags["call"]
			_, forRun := inv.Flags["for-run"]
			_, readOnly := inv.Flags["read-only"]
			_, auto := inv.Flags["autonomous"]
			_, profile := inv.Flags["permission-profile"]
			if (call || forRun || readOnly) && (auto || profile) {
				return fmt.Errorf("/approve: --autonomous and --permission-profile go with accepting a plan, not with --call, --for-run or --read-only")
			}
			if forRun && readOnly {
				return fmt.Errorf("/approve: --for-run and --read-only are two answers: --for-run allows the call's tool, --read-only every read-only call")
			}
			return nil
		},
	},
	{
		Name: "deny", Args: "REASON…", Summary: "Refuse the tool call a manual run waits on; the model reads the reason",
		Flags: []Flag{
			{Name: "call", Value: true, Usage: "the tool call to refuse (default: the one the run waits on)", arg: "ID"},
			{Name: "for-run", Usage: "refuse the call's tool for the rest of the run, whatever the run control"},
			flagRun,
		},
		CLI: []string{"approve"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Drives: true, Events: true,
		args: argText, argFlag: "deny", argNoun: "reason the model reads",
	},
	{
		Name: "cancel", Args: "[RUN]", Summary: "Stop a run for good",
		Flags: []Flag{flagReason},
		CLI:   []string{"cancel"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "attach", Args: "RUN", Summary: "Watch a run and give it commands",
		CLI: []string{"attach"}, Surfaces: []Surface{CLI, TUI, Web, ACP},
		args: argPlain, argNoun: "run to attach to",
	},
	{
		Name: "resume", Args: "[RUN] [GUIDANCE…]", Summary: "Continue an escalated, interrupted or stopped run; guidance goes to the model",
		Flags: []Flag{
			{Name: "run", Value: true, Usage: "the run (then every argument is guidance)", arg: "ID", to: "-"},
			{Name: "max-turns", Value: true, Usage: "grant this many more model requests", arg: "N"},
			{Name: "max-retries", Value: true, Usage: "the retry limit from now on", arg: "N"},
			{Name: "max-cost", Value: true, Usage: "grant this many more US dollars", arg: "USD"},
			{Name: "max-wall", Value: true, Usage: "grant this much more wall time (30m, 2h)", arg: "DURATION"},
			{Name: "max-input-tokens", Value: true, Usage: "grant this many more input tokens", arg: "N"},
			{Name: "max-output-tokens", Value: true, Usage: "grant this many more output tokens", arg: "N"},
		},
		CLI: []string{"resume"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Drives: true, Events: true,
		args: argRunText, argNoun: "run",
	},
	{
		Name: "tasks", Summary: "Every run and session in flight, what it waits for and the next command",
		Flags: []Flag{{Name: "all", Usage: "list finished runs too"}},
		CLI:   []string{"tasks"}, Surfaces: []Surface{CLI, TUI, Web, ACP},
	},
	{
		Name: "status", Args: "[RUN]", Summary: "A run's phase, axes, retries, budgets, plan and last events",
		CLI: []string{"status"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "goals", Args: "[RUN]", Summary: "A run's goals and criteria with their status and last evidence (default: the latest run)",
		CLI: []string{"goals"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, RunOptional: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "review", Args: "[RUN]", Summary: "Review a run's branch, a range (--base, --head) or the uncommitted changes",
		Flags: []Flag{
			{Name: "base", Value: true, Usage: "review from this commit (branch, tag or hash); alone: against the working tree", arg: "REF"},
			{Name: "head", Value: true, Usage: "review up to this commit (with --base)", arg: "REF"},
		},
		CLI: []string{"review"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, RunOptional: true,
		args: argRun, argNoun: "run",
		check: func(inv Invocation) error {
			_, base := inv.Flags["base"]
			_, head := inv.Flags["head"]
			if head && !base {
				return fmt.Errorf("/review: --head needs --base (the range is --base A --head B)")
			}
			if base && len(inv.Args) > 0 {
				return fmt.Errorf("/review: give a run or a range (--base, --head), not both")
			}
			return nil
		},
	},
	{
		Name: "diff", Args: "[RUN]", Summary: "What a run changed against the commit its branch was cut from",
		Flags: []Flag{
			{Name: "stat", Usage: "summarise the changes per file"},
			{Name: "name-status", Usage: "list the changed files"},
			{Name: "committed", Usage: "only the run's commits, not its worktree's uncommitted changes"},
			{Name: "records", Usage: "show ultra's records of the run (brief, goals, ledger) too, not only the code"},
		},
		CLI: []string{"diff"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "land", Args: "[RUN]", Summary: "Merge a run's branch into its base, only if its tip is green",
		Flags: []Flag{
			{Name: "allow-outside-links", Usage: "land symbolic links that leave the repository or point at a path it does not hold"},
		},
		CLI: []string{"land"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "undo", Args: "[RUN]", Summary: "Drop a run's worktree and branch, or roll it back to its last green commit",
		Flags: []Flag{
			{Name: "to-last-green", Usage: "keep the run, reset it to its last green commit"},
			{Name: "dry-run", Usage: "say what would be dropped, and drop nothing"},
		},
		CLI: []string{"undo"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "doctor", Args: "[fix|heal]", Summary: "The health of ultra's state here; fix applies the safe fixes, heal also starts a repair run",
		Flags: []Flag{{Name: "dry-run", Usage: "with fix: say what would be fixed, and change nothing"}},
		CLI:   []string{"doctor"}, Surfaces: []Surface{CLI, TUI, Web, ACP},
		ArgValues: []string{"fix", "heal"}, args: argAction, argNoun: "doctor action",
		check: func(inv Invocation) error {
			if _, dry := inv.Flags["dry-run"]; dry && (len(inv.Args) == 0 || inv.Args[0] != "fix") {
				return fmt.Errorf("/doctor: --dry-run goes with fix (/doctor fix --dry-run)")
			}
			return nil
		},
	},
	{
		Name: "repair", Args: "[RUN]", Summary: "Switch a run to repair mode, or start a repair run for what doctor finds",
		Flags: []Flag{
			{Name: "autonomous", Usage: "repair until clean, blocked or out of limits, without pausing"},
			flagScope,
			flagReason,
		},
		CLI: []string{"repair"}, Surfaces: []Surface{CLI, TUI, Web, ACP}, Run: true, Drives: true, Events: true, RunOptional: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "model", Args: "[NAME]", Summary: "List the models the server serves; with NAME, use it for the next run",
		CLI: []string{"models"}, Surfaces: []Surface{CLI, TUI, Web, ACP},
		args: argLocal, argNoun: "model",
	},
	{
		Name: "clear", Summary: "Clear the conversation on screen",
		Local: "clears the conversation on screen", Surfaces: []Surface{TUI, Web},
		Absent: map[Surface]string{ACP: "the editor owns the conversation on its screen"},
	},
	{
		Name: "help", Args: "[COMMAND]", Summary: "The commands, or one command's flags",
		Local: "shows the slash commands on screen (on the command line: ultra --help)", Surfaces: []Surface{TUI, Web, ACP},
		args: argLocal, argNoun: "command",
	},
}

func init() {
	// /help COMMAND names a command of the table (set here: the table
	// cannot refer to itself while it is built).
	help, _ := Lookup("help")
	help.check = func(inv Invocation) error {
		if len(inv.Args) > 0 {
			if _, ok := Lookup(inv.Args[0]); !ok {
				return fmt.Errorf("/help: unknown command /%s (see /help)", strings.TrimPrefix(inv.Args[0], "/"))
			}
		}
		return nil
	}
}

// oneControl refuses a run control given more than once (--autonomous
// and --control manual).
func oneControl(inv Invocation) error {
	var given []string
	if inv.Cmd.args == argAxis && inv.Cmd.argFlag == "control" {
		given = append(given, "/control")
	}
	for _, f := range inv.Cmd.Flags {
		if _, ok := inv.Flags[f.Name]; ok && (f.Name == "control" || strings.HasPrefix(f.to, axes.Control+"=")) {
			given = append(given, "--"+f.Name)
		}
	}
	if len(given) > 1 {
		return fmt.Errorf("/%s: %s each set the run control; give one", inv.Cmd.Name, strings.Join(given, " and "))
	}
	return nil
}
