// Package command holds the one table of ultra's commands that every
// surface offers: the CLI's cobra commands, the TUI's slash commands and
// (later) the web page. For each command it has the usage, the flags and
// their allowed values, and how a slash command becomes the argv of the
// `ultra` binary, so that the CLI stays the single implementation of what
// a command does. It also parses a typed line, completes a partial one and
// writes the /help text. It is pure: no files, processes or network.
package command

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ultra-dev/ultra/internal/axes"
)

// Surface is a place a person gives commands from.
type Surface string

// The surfaces.
const (
	CLI Surface = "cli"
	TUI Surface = "tui"
	Web Surface = "web"
)

// AllSurfaces lists every surface.
var AllSurfaces = []Surface{CLI, TUI, Web}

// Flag is one flag a command takes.
type Flag struct {
	Name   string   // without dashes: "permission-profile"
	Value  bool     // takes a value (false: a switch)
	Usage  string   // one line
	Values []string // the allowed values, for completion and checking (nil: free text)

	arg  string // the placeholder of its value in usage lines ("ID"); default the name in upper case
	noun string // what a value is, for errors: "run control"
	to   string // a switch that stands for flag=value of the CLI ("control=autonomous"); "-" for a flag the CLI form does not take
}

// Placeholder is how usage lines show the flag's value ("" for a switch).
func (f Flag) Placeholder() string {
	switch {
	case !f.Value:
		return ""
	case f.arg != "":
		return f.arg
	}
	return strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// Command is one command of every surface.
type Command struct {
	Name     string   // "mode" (typed "/mode" in the TUI)
	Args     string   // positional usage, e.g. "MODE" or "[RUN]"
	Summary  string   // one line for /help and completion
	Flags    []Flag   // in the order usage lists them
	CLI      []string // the ultra command path it runs as, e.g. {"steer"}; nil when the command belongs to interactive surfaces only
	Local    string   // for CLI == nil: why it has no CLI form ("clears the conversation on screen")
	Surfaces []Surface
	Run      bool // acts on a run: the surface supplies the run it shows when the invocation names none
	Axes     bool // changes axes (the TUI applies it to its next run's axes when no run is live)
	// Drives says the command goes on with the run in its own process
	// when no other process drives it: a surface follows its progress as
	// the run's events. Events adds that it prints them as JSON lines
	// with --output jsonl.
	Drives, Events bool

	// RunOptional, with Run, says the command also works on no run at
	// all (goals: the latest run; review: the working tree; repair: a new
	// repair run).
	RunOptional bool
	// ArgValues are the allowed values of the first positional argument,
	// for completion and checking (nil: free text or a run id).
	ArgValues []string
	// Absent names the surfaces (other than the CLI, which CLI and Local
	// account for) that do not offer the command, and why.
	Absent map[Surface]string

	args    argKind
	argFlag string            // argAxis: the CLI flag the value goes to; argText: the CLI flag the text goes to
	argNoun string            // what the first positional is, for errors: "work mode", "run"
	sets    map[string]string // CLI flags the command always sets (autonomous: control=autonomous)
	check   func(inv Invocation) error
}

// argKind is what a command's positional arguments are.
type argKind int

const (
	argNone    argKind = iota // none
	argRun                    // [RUN]: the run
	argAxis                   // VALUE: the value of an axis, passed as the flag argFlag
	argAction                 // [ACTION]: a subcommand of the CLI path (doctor fix)
	argRunText                // [RUN] [TEXT…]: the run, then text passed as one argument (with --run: all text)
	argText                   // TEXT…: joined, passed as the value of the flag argFlag
	argPlain                  // ARG: one argument passed as it is
	argLocal                  // [ARG]: one argument the interactive surface handles
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
		Flags: fl, CLI: []string{"steer"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Axes: true,
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
		CLI:   []string{"steer"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Axes: true,
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
		CLI:   []string{"autonomous"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Drives: true, Axes: true,
		args: argRun, argNoun: "run", sets: map[string]string{axes.Control: "autonomous"},
	},
	{
		Name: "next", Args: "[RUN]", Summary: "Let a paused or assisted run go on for one unit",
		Flags: []Flag{flagReason},
		CLI:   []string{"next"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Drives: true, Events: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "pause", Args: "[RUN]", Summary: "Pause a live run at its next safe point (/next or /resume goes on)",
		Flags: []Flag{flagReason},
		CLI:   []string{"pause"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "stop", Args: "[RUN]", Summary: "Stop a run at its next safe point until a person resumes it",
		Flags: []Flag{flagReason},
		CLI:   []string{"stop"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
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
		CLI: []string{"approve"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Drives: true, Events: true,
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
			flagRun,
		},
		CLI: []string{"approve"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Drives: true, Events: true,
		args: argText, argFlag: "deny", argNoun: "reason the model reads",
	},
	{
		Name: "cancel", Args: "[RUN]", Summary: "Stop a run for good",
		Flags: []Flag{flagReason},
		CLI:   []string{"cancel"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "attach", Args: "RUN", Summary: "Watch a run and give it commands",
		CLI: []string{"attach"}, Surfaces: []Surface{CLI, TUI, Web},
		args: argPlain, argNoun: "run to attach to",
	},
	{
		Name: "resume", Args: "[RUN] [GUIDANCE…]", Summary: "Continue an escalated, interrupted or stopped run; guidance goes to the model",
		Flags: []Flag{{Name: "run", Value: true, Usage: "the run (then every argument is guidance)", arg: "ID", to: "-"}},
		CLI:   []string{"resume"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Drives: true, Events: true,
		args: argRunText, argNoun: "run",
	},
	{
		Name: "tasks", Summary: "Every run and session in flight, what it waits for and the next command",
		Flags: []Flag{{Name: "all", Usage: "list finished runs too"}},
		CLI:   []string{"tasks"}, Surfaces: []Surface{CLI, TUI, Web},
	},
	{
		Name: "status", Args: "[RUN]", Summary: "A run's phase, axes, retries, budgets, plan and last events",
		CLI: []string{"status"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "goals", Args: "[RUN]", Summary: "A run's goals and criteria with their status and last evidence (default: the latest run)",
		CLI: []string{"goals"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, RunOptional: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "review", Args: "[RUN]", Summary: "Review a run's branch, a range (--base, --head) or the uncommitted changes",
		Flags: []Flag{
			{Name: "base", Value: true, Usage: "review from this commit (branch, tag or hash); alone: against the working tree", arg: "REF"},
			{Name: "head", Value: true, Usage: "review up to this commit (with --base)", arg: "REF"},
		},
		CLI: []string{"review"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, RunOptional: true,
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
		CLI: []string{"diff"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "land", Args: "[RUN]", Summary: "Merge a run's branch into its base, only if its tip is green",
		Flags: []Flag{
			{Name: "allow-outside-links", Usage: "land symbolic links that leave the repository or point at a path it does not hold"},
		},
		CLI: []string{"land"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "undo", Args: "[RUN]", Summary: "Drop a run's worktree and branch, or roll it back to its last green commit",
		Flags: []Flag{
			{Name: "to-last-green", Usage: "keep the run, reset it to its last green commit"},
			{Name: "dry-run", Usage: "say what would be dropped, and drop nothing"},
		},
		CLI: []string{"undo"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "doctor", Args: "[fix|heal]", Summary: "The health of ultra's state here; fix applies the safe fixes, heal also starts a repair run",
		Flags: []Flag{{Name: "dry-run", Usage: "with fix: say what would be fixed, and change nothing"}},
		CLI:   []string{"doctor"}, Surfaces: []Surface{CLI, TUI, Web},
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
		CLI: []string{"repair"}, Surfaces: []Surface{CLI, TUI, Web}, Run: true, Drives: true, Events: true, RunOptional: true,
		args: argRun, argNoun: "run",
	},
	{
		Name: "model", Args: "[NAME]", Summary: "List the models the server serves; with NAME, use it for the next run",
		CLI: []string{"models"}, Surfaces: []Surface{CLI, TUI, Web},
		args: argLocal, argNoun: "model",
	},
	{
		Name: "clear", Summary: "Clear the conversation on screen",
		Local: "clears the conversation on screen", Surfaces: []Surface{TUI, Web},
	},
	{
		Name: "help", Args: "[COMMAND]", Summary: "The commands, or one command's flags",
		Local: "shows the slash commands on screen (on the command line: ultra --help)", Surfaces: []Surface{TUI, Web},
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

// PrintsEvents says the CLI command argv runs prints a run's events as
// JSON lines with --output jsonl (a command of the table with Events runs
// it).
func PrintsEvents(argv []string) bool {
	for i := range Table {
		c := &Table[i]
		if c.Events && len(c.CLI) > 0 && len(argv) >= len(c.CLI) && slices.Equal(argv[:len(c.CLI)], c.CLI) {
			return true
		}
	}
	return false
}

// Lookup finds a command by name ("mode" or "/mode").
func Lookup(name string) (*Command, bool) {
	name = strings.TrimPrefix(name, "/")
	for i := range Table {
		if Table[i].Name == name {
			return &Table[i], true
		}
	}
	return nil, false
}

// Flag finds one of the command's flags by name (without dashes).
func (c *Command) Flag(name string) (*Flag, bool) {
	for i := range c.Flags {
		if c.Flags[i].Name == name {
			return &c.Flags[i], true
		}
	}
	return nil, false
}

// On reports whether the command is offered on surface s.
func (c *Command) On(s Surface) bool { return slices.Contains(c.Surfaces, s) }

// Synopsis is the command's one-line form: "/mode MODE".
func (c *Command) Synopsis() string {
	if c.Args == "" {
		return "/" + c.Name
	}
	return "/" + c.Name + " " + c.Args
}

// Usage is the command's help: its synopsis, summary, flags, and the
// command line it runs as.
func (c *Command) Usage() string {
	var b strings.Builder
	syn := c.Synopsis()
	if len(c.Flags) > 0 {
		syn += " [flags]"
	}
	fmt.Fprintf(&b, "%s\n  %s\n", syn, c.Summary)
	if len(c.ArgValues) > 0 && !strings.Contains(c.Args, "|") {
		fmt.Fprintf(&b, "  %s: %s\n", c.Args, strings.Join(c.ArgValues, ", "))
	}
	if len(c.Flags) > 0 {
		b.WriteString("flags:\n")
		width := 0
		for _, f := range c.Flags {
			width = max(width, len(flagSynopsis(f)))
		}
		for _, f := range c.Flags {
			line := f.Usage
			if f.Values != nil {
				line += ": " + strings.Join(f.Values, ", ")
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", width, flagSynopsis(f), line)
		}
	}
	if c.CLI != nil {
		fmt.Fprintf(&b, "command line: ultra %s\n", strings.Join(c.CLI, " "))
	} else {
		fmt.Fprintf(&b, "no command-line form: it %s\n", c.Local)
	}
	return b.String()
}

func flagSynopsis(f Flag) string {
	if f.Value {
		return "--" + f.Name + " " + f.Placeholder()
	}
	return "--" + f.Name
}

// flagList is the flags of a command, for errors: "--scope, --reason".
func (c *Command) flagList() string {
	if len(c.Flags) == 0 {
		return "it takes no flags"
	}
	names := make([]string, len(c.Flags))
	for i, f := range c.Flags {
		names[i] = "--" + f.Name
	}
	return "flags: " + strings.Join(names, ", ")
}

// Help is the /help text: every command with its arguments and summary.
func Help() string {
	var b strings.Builder
	b.WriteString("Commands (/help COMMAND shows a command's flags):\n")
	width := 0
	for i := range Table {
		width = max(width, utf8.RuneCountInString(Table[i].Synopsis()))
	}
	for i := range Table {
		c := &Table[i]
		syn := c.Synopsis()
		fmt.Fprintf(&b, "  %s%s  %s\n", syn, strings.Repeat(" ", width-utf8.RuneCountInString(syn)), c.Summary)
	}
	return b.String()
}

// Invocation is one parsed slash command.
type Invocation struct {
	Cmd   *Command
	Args  []string          // positional arguments
	Flags map[string]string // flag → value ("true" for switches)
}

// token is one word of a line, with where it starts (a rune column from
// 1) and whether any of it was quoted (a quoted word is never a flag).
type token struct {
	text   string
	col    int
	quoted bool
}

// unterminatedError is a quote left open; col is where it opens.
type unterminatedError struct {
	quote rune
	col   int
}

func (e *unterminatedError) Error() string {
	return fmt.Sprintf("unterminated quote (%c) opened at column %d", e.quote, e.col)
}

// split cuts a line into words, shell-like: '…' keeps everything, "…"
// keeps everything but \" and \\, and a backslash outside quotes keeps
// the next character. The last word of a line that ends inside a quote
// or after a backslash is returned with the error.
func split(line string) ([]token, error) {
	var out []token
	var cur strings.Builder
	in, started, quoted, start := rune(0), false, false, 0
	quoteCol, escaped := 0, false
	col := 0
	flush := func() {
		if started {
			out = append(out, token{text: cur.String(), col: start, quoted: quoted})
		}
		cur.Reset()
		started, quoted = false, false
	}
	begin := func() {
		if !started {
			started, start = true, col
		}
	}
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		col = i + 1
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case in == '\'':
			if r == '\'' {
				in = 0
			} else {
				cur.WriteRune(r)
			}
		case in == '"':
			switch {
			case r == '"':
				in = 0
			case r == '\\' && i+1 < len(runes) && (runes[i+1] == '"' || runes[i+1] == '\\'):
				i++
				cur.WriteRune(runes[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			begin()
			in, quoted, quoteCol = r, true, col
		case r == '\\':
			begin()
			quoted, escaped = true, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			flush()
		default:
			begin()
			cur.WriteRune(r)
		}
	}
	switch {
	case in != 0:
		flush()
		return out, &unterminatedError{quote: in, col: quoteCol}
	case escaped:
		flush()
		return out, fmt.Errorf("a backslash ends the line at column %d", len(runes))
	}
	flush()
	return out, nil
}

// isFlag reports that a word is a flag: unquoted, "--name…".
func (t token) isFlag() bool {
	return !t.quoted && strings.HasPrefix(t.text, "--") && len(t.text) > 2
}

// Parse reads one slash command: "/mode repair --autonomous
// --permission-profile normal". Words are split shell-like; a flag is
// --flag value or --flag=value; "--" ends the flags.
func Parse(line string) (Invocation, error) {
	toks, err := split(line)
	if len(toks) == 0 {
		if err != nil {
			return Invocation{}, err
		}
		return Invocation{}, errors.New("no command: type /help for the commands")
	}
	name := toks[0].text
	c, ok := Lookup(name)
	if !ok {
		return Invocation{}, fmt.Errorf("unknown command /%s (see /help)", strings.TrimPrefix(name, "/"))
	}
	where := "/" + c.Name
	if err != nil {
		return Invocation{}, fmt.Errorf("%s: %v", where, err)
	}
	inv := Invocation{Cmd: c, Flags: map[string]string{}}
	text := c.args == argText || c.args == argRunText
	seen := map[string]bool{}
	rest := toks[1:]
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		if !t.quoted && t.text == "--" {
			for _, a := range rest[i+1:] {
				inv.Args = append(inv.Args, a.text)
			}
			break
		}
		if !t.quoted && !text && len(t.text) > 1 && t.text[0] == '-' && !t.isFlag() {
			return Invocation{}, fmt.Errorf("%s: unknown flag %s (%s)", where, t.text, c.flagList())
		}
		if !t.isFlag() {
			inv.Args = append(inv.Args, t.text)
			continue
		}
		fname, value, hasValue := strings.Cut(t.text[2:], "=")
		f, ok := c.Flag(fname)
		if !ok {
			return Invocation{}, fmt.Errorf("%s: unknown flag --%s (%s)", where, fname, c.flagList())
		}
		if seen[fname] {
			return Invocation{}, fmt.Errorf("%s: --%s is given twice", where, fname)
		}
		seen[fname] = true
		if !f.Value {
			if hasValue {
				switch strings.ToLower(value) {
				case "true":
				case "false":
					continue
				default:
					return Invocation{}, fmt.Errorf("%s: --%s is a switch and takes no value (got %q)", where, fname, value)
				}
			}
			inv.Flags[fname] = "true"
			continue
		}
		if !hasValue {
			if i+1 >= len(rest) || rest[i+1].isFlag() || (!rest[i+1].quoted && rest[i+1].text == "--") {
				return Invocation{}, needsValue(where, f)
			}
			i++
			value = rest[i].text
		}
		if strings.TrimSpace(value) == "" {
			return Invocation{}, needsValue(where, f)
		}
		if f.Values != nil {
			v, err := pick(where, f.noun, value, f.Values)
			if err != nil {
				return Invocation{}, err
			}
			value = v
		}
		inv.Flags[fname] = value
	}
	if err := inv.checkArgs(); err != nil {
		return Invocation{}, err
	}
	if c.check != nil {
		if err := c.check(inv); err != nil {
			return Invocation{}, err
		}
	}
	return inv, nil
}

func needsValue(where string, f *Flag) error {
	if f.Values != nil {
		return fmt.Errorf("%s: --%s needs a value (%s)", where, f.Name, strings.Join(f.Values, ", "))
	}
	return fmt.Errorf("%s: --%s needs a value (%s)", where, f.Name, f.Placeholder())
}

// pick checks value against the allowed values, in any case.
func pick(where, noun, value string, allowed []string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	if slices.Contains(allowed, v) {
		return v, nil
	}
	return "", fmt.Errorf("%s: %q is not a %s (%s)", where, value, noun, strings.Join(allowed, ", "))
}

// checkArgs checks the number and values of the positional arguments,
// normalising values checked against a list.
func (inv *Invocation) checkArgs() error {
	c := inv.Cmd
	where := "/" + c.Name
	n := len(inv.Args)
	lo, hi := 0, 0
	switch c.args {
	case argRun, argAction, argLocal:
		hi = 1
	case argAxis, argPlain:
		lo, hi = 1, 1
	case argText:
		lo, hi = 1, -1
	case argRunText:
		hi = -1
	}
	if n < lo {
		if len(c.ArgValues) > 0 {
			return fmt.Errorf("%s: give a %s (%s)", where, c.argNoun, strings.Join(c.ArgValues, ", "))
		}
		return fmt.Errorf("%s: give the %s (usage: %s)", where, c.argNoun, c.Synopsis())
	}
	if hi >= 0 && n > hi {
		return fmt.Errorf("%s: unexpected argument %q (usage: %s)", where, inv.Args[hi], c.Synopsis())
	}
	if c.args == argText && strings.TrimSpace(strings.Join(inv.Args, " ")) == "" {
		return fmt.Errorf("%s: give the %s (usage: %s)", where, c.argNoun, c.Synopsis())
	}
	if n > 0 && len(c.ArgValues) > 0 {
		v, err := pick(where, c.argNoun, inv.Args[0], c.ArgValues)
		if err != nil {
			return err
		}
		inv.Args[0] = v
	}
	if n > 0 && (c.args == argRun || c.args == argPlain || (c.args == argRunText && inv.Flags["run"] == "" && LooksLikeRun(inv.Args[0]))) {
		if err := checkRunID(where, inv.Args[0]); err != nil {
			return err
		}
	}
	if id, ok := inv.Flags["run"]; ok {
		if err := checkRunID(where, id); err != nil {
			return err
		}
	}
	return nil
}

// checkRunID refuses what cannot be a run id or prefix: the CLI would
// read it as a flag, or it is empty.
func checkRunID(where, id string) error {
	if strings.TrimSpace(id) == "" || strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t\n") {
		return fmt.Errorf("%s: %q is not a run id", where, id)
	}
	return nil
}

// ErrLocal is what CLIArgs returns (wrapped) for an invocation that only
// an interactive surface carries out.
var ErrLocal = errors.New("no command-line form")

type localError struct{ msg string }

func (e *localError) Error() string        { return e.msg }
func (e *localError) Is(target error) bool { return target == ErrLocal }

// IsLocal reports whether an interactive surface carries out the
// invocation itself instead of running the CLI: /clear, /help, /model
// NAME.
func (inv Invocation) IsLocal() bool {
	return inv.Cmd != nil && (inv.Cmd.CLI == nil || (inv.Cmd.args == argLocal && len(inv.Args) > 0))
}

// runOf is the run the invocation names, and the positional arguments
// left after it.
func (inv Invocation) runOf() (string, []string) {
	if id, ok := inv.Flags["run"]; ok {
		return id, inv.Args
	}
	switch inv.Cmd.args {
	case argRun:
		if len(inv.Args) > 0 {
			return inv.Args[0], inv.Args[1:]
		}
	case argRunText:
		// "/resume try the other parser" is guidance for the run on
		// screen; a first word shaped like a run id names the run.
		if len(inv.Args) > 0 && LooksLikeRun(inv.Args[0]) {
			return inv.Args[0], inv.Args[1:]
		}
	}
	return "", inv.Args
}

// runShape is what a run id looks like (20261124-091217-b8302f), or a
// prefix of one.
var runShape = regexp.MustCompile(`^\d{8}(-\d{0,6}(-[0-9a-f]{0,6})?)?$`)

// LooksLikeRun says s has the shape of a run id or of a prefix of one.
func LooksLikeRun(s string) bool { return runShape.MatchString(s) }

// CLIArgs is the argv of `ultra` (without the program name) that carries
// out the invocation. run is the run the surface shows ("" for none); it
// is used when the invocation names no run.
func (inv Invocation) CLIArgs(run string) ([]string, error) {
	c := inv.Cmd
	if c == nil {
		return nil, errors.New("no command: type /help for the commands")
	}
	where := "/" + c.Name
	if c.CLI == nil {
		return nil, &localError{fmt.Sprintf("%s %s; it has no command-line form", where, c.Local)}
	}
	if c.args == argLocal && len(inv.Args) > 0 {
		name := inv.Args[0]
		return nil, &localError{fmt.Sprintf("%s %s sets the next run's model in the TUI; on the command line pass --model %s to ultra run", where, name, name)}
	}
	argv := slices.Clone(c.CLI)
	id, rest := inv.runOf()
	if c.Run {
		_, base := inv.Flags["base"]
		if id == "" && !(c.Name == "review" && base) {
			id = run
		}
		if id == "" && !c.RunOptional {
			return nil, fmt.Errorf("%s needs a run: attach to one or give its id", where)
		}
		if id != "" {
			if err := checkRunID(where, id); err != nil {
				return nil, err
			}
			argv = append(argv, id)
		}
	}
	switch c.args {
	case argAction, argPlain:
		argv = append(argv, rest...)
	case argAxis:
		if len(rest) != 1 {
			return nil, fmt.Errorf("%s: give a %s (usage: %s)", where, c.argNoun, c.Synopsis())
		}
		argv = append(argv, "--"+c.argFlag, rest[0])
	}
	for _, f := range c.Flags {
		v, ok := inv.Flags[f.Name]
		switch {
		case !ok || f.to == "-":
		case f.to != "":
			name, value, _ := strings.Cut(f.to, "=")
			argv = append(argv, "--"+cliFlag(name), value)
		case !f.Value:
			argv = append(argv, "--"+f.Name)
		case strings.HasPrefix(v, "-"):
			argv = append(argv, "--"+f.Name+"="+v)
		default:
			argv = append(argv, "--"+f.Name, v)
		}
	}
	text := strings.TrimSpace(strings.Join(rest, " "))
	switch c.args {
	case argText:
		if text == "" {
			return nil, fmt.Errorf("%s: give the %s (usage: %s)", where, c.argNoun, c.Synopsis())
		}
		if strings.HasPrefix(text, "-") {
			argv = append(argv, "--"+c.argFlag+"="+text)
		} else {
			argv = append(argv, "--"+c.argFlag, text)
		}
	case argRunText:
		if text != "" {
			if strings.HasPrefix(text, "-") {
				argv = append(argv, "--")
			}
			argv = append(argv, text)
		}
	}
	return argv, nil
}

// cliFlag is the CLI flag of an axis name ("permission_profile" →
// "permission-profile").
func cliFlag(axis string) string {
	for f, a := range axisFlags {
		if a == axis {
			return f
		}
	}
	return axis
}

// AxisChanges is what an Axes command changes: axis name (as in
// internal/axes) → value.
func (inv Invocation) AxisChanges() (map[string]string, error) {
	c := inv.Cmd
	if c == nil {
		return nil, errors.New("no command: type /help for the commands")
	}
	where := "/" + c.Name
	if !c.Axes {
		return nil, fmt.Errorf("%s changes no axes", where)
	}
	out := map[string]string{}
	set := func(axis, value, by string) error {
		v := strings.ToLower(strings.TrimSpace(value))
		if !slices.Contains(axes.Values[axis], v) {
			return fmt.Errorf("%s: %q is not a %s (%s)", where, value, axisNoun(axis), strings.Join(axes.Values[axis], ", "))
		}
		if old, ok := out[axis]; ok && old != v {
			return fmt.Errorf("%s: the %s is given twice (%s and %s, by %s)", where, axisNoun(axis), old, v, by)
		}
		out[axis] = v
		return nil
	}
	for axis, v := range c.sets {
		out[axis] = v
	}
	if c.args == argAxis {
		if len(inv.Args) != 1 {
			return nil, fmt.Errorf("%s: give a %s (usage: %s)", where, c.argNoun, c.Synopsis())
		}
		if err := set(axisFlags[c.argFlag], inv.Args[0], c.Synopsis()); err != nil {
			return nil, err
		}
	}
	for _, f := range c.Flags {
		v, ok := inv.Flags[f.Name]
		if !ok {
			continue
		}
		if axis := axisFlags[f.Name]; axis != "" {
			if err := set(axis, v, "--"+f.Name); err != nil {
				return nil, err
			}
		} else if axis, value, ok := strings.Cut(f.to, "="); ok && f.to != "-" {
			if err := set(axis, value, "--"+f.Name); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)", where)
	}
	return out, nil
}

func axisNoun(axis string) string {
	switch axis {
	case axes.Mode:
		return "work mode"
	case axes.Control:
		return "run control"
	case axes.Permission:
		return "permission profile"
	case axes.ModelMode:
		return "model mode"
	}
	return axis
}

// Complete lists the slash commands that start with prefix ("/mo" →
// "/mode", "/model", "/model-mode"), sorted.
func Complete(prefix string) []string {
	p := strings.TrimPrefix(prefix, "/")
	var out []string
	for i := range Table {
		if strings.HasPrefix(Table[i].Name, p) {
			out = append(out, "/"+Table[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// CompleteLine lists the lines the last word of line may complete to: a
// command name, a flag ("/mode repair --per" → "/mode repair
// --permission-profile"), a flag's value ("/steer --scope n" → "/steer
// --scope now") or a positional value ("/control a" → "/control
// assisted", "/control autonomous"). Each is the whole line; none when
// nothing fits.
func CompleteLine(line string) []string {
	toks, err := split(line)
	if err != nil {
		return nil // inside a quote or after a backslash: free text
	}
	runes := []rune(line)
	endsInSpace := len(runes) > 0 && strings.ContainsRune(" \t\n\r", runes[len(runes)-1])
	if len(toks) == 0 || (len(toks) == 1 && !endsInSpace) {
		if strings.TrimSpace(line) == "" {
			return Complete("/")
		}
		lead := string(runes[:toks[0].col-1])
		var out []string
		for _, s := range Complete(toks[0].text) {
			if strings.HasPrefix(toks[0].text, "/") {
				out = append(out, lead+s)
			} else {
				out = append(out, lead+strings.TrimPrefix(s, "/"))
			}
		}
		return out
	}
	c, ok := Lookup(toks[0].text)
	if !ok {
		return nil
	}
	words := toks[1:]
	cur := token{col: len(runes) + 1}
	if !endsInSpace {
		cur, words = words[len(words)-1], words[:len(words)-1]
		if cur.quoted {
			return nil
		}
	}
	head := string(runes[:cur.col-1])
	// What the words before this one are: given flags, positionals, and
	// whether the last one waits for a value.
	given := map[string]bool{}
	positionals, afterDash := 0, false
	var waiting *Flag
	for _, t := range words {
		switch {
		case waiting != nil:
			waiting = nil
		case afterDash:
			positionals++
		case !t.quoted && t.text == "--":
			afterDash = true
		case t.isFlag():
			name, _, hasValue := strings.Cut(t.text[2:], "=")
			given[name] = true
			if f, ok := c.Flag(name); ok && f.Value && !hasValue {
				waiting = f
			}
		default:
			positionals++
		}
	}
	var out []string
	values := func(prefix string, allowed []string) {
		for _, v := range allowed {
			if strings.HasPrefix(v, strings.ToLower(cur.text[len(prefix):])) {
				out = append(out, head+prefix+v)
			}
		}
	}
	switch {
	case waiting != nil:
		values("", waiting.Values)
	case afterDash:
	case strings.HasPrefix(cur.text, "--") && strings.Contains(cur.text, "="):
		name, _, _ := strings.Cut(cur.text[2:], "=")
		if f, ok := c.Flag(name); ok {
			values("--"+name+"=", f.Values)
		}
	case strings.HasPrefix(cur.text, "-") || (cur.text == "" && (positionals > 0 || len(c.ArgValues) == 0)):
		for _, f := range c.Flags {
			if !given[f.Name] && strings.HasPrefix("--"+f.Name, cur.text) {
				out = append(out, head+"--"+f.Name)
			}
		}
	case positionals == 0:
		values("", c.ArgValues)
	}
	return out
}
