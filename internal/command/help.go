package command

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

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
