// Package command holds the one table of ultra's commands that every
// surface offers: the CLI's cobra commands, the TUI's slash commands, the
// HTTP API and web page, and an editor's slash commands over ACP. For each
// command it has the usage, the flags and their allowed values, and how a
// slash command becomes the argv of the `ultra` binary, so that the CLI
// stays the single implementation of what a command does. It also parses
// a typed line, completes a partial one and writes the /help text. It is
// pure: no files, processes or network.
package command

import (
	"slices"
	"strings"
)

// Surface is a place a person gives commands from.
type Surface string

// The surfaces.
const (
	CLI Surface = "cli"
	TUI Surface = "tui"
	Web Surface = "web"
	// ACP is an editor speaking the Agent Client Protocol (ultra acp).
	ACP Surface = "acp"
)

// AllSurfaces lists every surface.
var AllSurfaces = []Surface{CLI, TUI, Web, ACP}

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
