package main

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/surface/acp"
)

// parityRun is the run a surface shows while the parity lines run.
const parityRun = "20261122-020815-a3f9c1"

// parityLines are representative slash commands: together they set
// every flag of every command in command.Table (TestCommandTableParity
// fails naming a flag none sets).
var parityLines = []string{
	"/mode repair --autonomous --permission-profile normal --model-mode fast --scope now --reason 'from here' --run 20261122",
	"/mode build --assisted",
	"/mode build --manual",
	"/mode plan --control manual",
	"/control manual --mode build --permission-profile trusted --model-mode deep --scope after-current-unit --reason why --run 20261122",
	"/permission-profile restricted --autonomous --mode build --model-mode smart --scope now --reason x --run 20261122",
	"/permission-profile restricted --assisted",
	"/permission-profile restricted --manual",
	"/permission-profile restricted --control autonomous",
	"/model-mode deep --autonomous --mode build --permission-profile normal --scope next-milestone --reason x --run 20261122",
	"/model-mode deep --assisted",
	"/model-mode deep --manual",
	"/model-mode deep --control assisted",
	"/steer 20261122 --mode build --control manual --permission-profile trusted --model-mode fast --scope next-milestone --reason x",
	"/steer --autonomous --reason -x",
	"/steer --assisted",
	"/steer --manual",
	"/autonomous 20261122 --scope now --reason x",
	"/autonomous",
	"/next --reason x",
	"/pause --reason x",
	"/stop 20261122 --reason x",
	"/approve 20261122 --call call_3 --for-run",
	"/approve 20261122 --read-only",
	"/approve --autonomous --permission-profile trusted",
	"/deny not the lockfile --call call_3 --run 20261122",
	"/deny -- -rf is never fine",
	"/deny no network calls --for-run",
	"/cancel --reason obsolete",
	"/attach 20261122",
	"/resume",
	"/resume 20261122 try the other parser",
	"/resume --max-turns 10 --max-retries 3 --max-cost 2.5 --max-wall 30m --max-input-tokens 100000 --max-output-tokens 5000 keep going",
	"/resume --run 20261122 -- -v was the wrong flag",
	"/tasks --all",
	"/status",
	"/goals",
	"/review",
	"/review --base main --head feature",
	"/diff --stat --name-status --committed",
	"/diff --records",
	"/land --allow-outside-links",
	"/undo --to-last-green --dry-run",
	"/doctor",
	"/doctor fix --dry-run",
	"/doctor heal",
	"/repair",
	"/repair 20261122 --autonomous --scope now --reason x",
	"/model",
	"/model gpt-5",
	"/clear",
	"/help",
	"/help mode",
}

func TestCommandTableParity(t *testing.T) {
	covered := map[string]map[string]bool{} // command → flags some line sets
	used := map[string]bool{}               // commands some line uses
	for _, line := range parityLines {
		inv, err := command.Parse(line)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		c := inv.Cmd
		used[c.Name] = true
		if covered[c.Name] == nil {
			covered[c.Name] = map[string]bool{}
		}
		for f := range inv.Flags {
			covered[c.Name][f] = true
		}
		argv, err := inv.CLIArgs(parityRun)
		if errors.Is(err, command.ErrLocal) {
			if !inv.IsLocal() {
				t.Errorf("%s: CLIArgs says local, IsLocal does not", line)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: CLIArgs: %v", line, err)
			continue
		}
		checkArgv(t, line, c, inv, argv)
	}
	for i := range command.Table {
		c := &command.Table[i]
		if c.CLI == nil {
			continue
		}
		if !used[c.Name] {
			t.Errorf("/%s: no line of parityLines uses it", c.Name)
		}
		for _, f := range c.Flags {
			if !covered[c.Name][f.Name] {
				t.Errorf("/%s --%s: no line of parityLines sets it", c.Name, f.Name)
			}
		}
	}
}

// checkArgv proves that argv, the CLI form of line, names the command of
// c's CLI path (or one of its subcommands), that every flag it passes is
// defined there, and that cobra parses it and accepts its arguments.
func checkArgv(t *testing.T, line string, c *command.Command, inv command.Invocation, argv []string) {
	t.Helper()
	root := newRoot()
	want, _, err := root.Find(c.CLI)
	if err != nil || want == root || want.CommandPath() != "ultra "+strings.Join(c.CLI, " ") {
		t.Errorf("/%s: the CLI has no command ultra %s (found %v, %v)", c.Name, strings.Join(c.CLI, " "), commandPath(want), err)
		return
	}
	if !slices.Equal(argv[:len(c.CLI)], c.CLI) {
		t.Errorf("%s: argv %q does not start with the command's CLI path %q", line, argv, c.CLI)
		return
	}
	found, rest, err := root.Find(argv)
	if err != nil {
		t.Errorf("%s: ultra %s: %v", line, strings.Join(argv, " "), err)
		return
	}
	if !isUnder(found, want) {
		t.Errorf("%s: ultra %s runs %s, not %s or one of its subcommands", line, strings.Join(argv, " "), found.CommandPath(), want.CommandPath())
		return
	}
	// Every flag of the entry the argv passes on is defined there.
	for _, a := range rest {
		if a == "--" {
			break
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if found.Flags().Lookup(name) == nil && found.InheritedFlags().Lookup(name) == nil {
				t.Errorf("%s: ultra %s: %s has no flag --%s", line, strings.Join(argv, " "), found.CommandPath(), name)
			}
		}
	}
	for name := range inv.Flags {
		passed := slices.ContainsFunc(rest, func(a string) bool { return a == "--"+name || strings.HasPrefix(a, "--"+name+"=") })
		if passed && found.Flags().Lookup(name) == nil {
			t.Errorf("%s: --%s is passed to %s, which does not define it", line, name, found.CommandPath())
		}
	}
	if err := found.ParseFlags(rest); err != nil {
		t.Errorf("%s: ultra %s: %v", line, strings.Join(argv, " "), err)
		return
	}
	if err := found.ValidateArgs(found.Flags().Args()); err != nil {
		t.Errorf("%s: ultra %s: %v", line, strings.Join(argv, " "), err)
	}
}

func isUnder(c, ancestor *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c == ancestor {
			return true
		}
	}
	return false
}

func commandPath(c *cobra.Command) string {
	if c == nil {
		return "nothing"
	}
	return c.CommandPath()
}

// A command the table says prints a run's events takes --output jsonl,
// which the TUI adds when it drives a run with it; one that drives a run
// is a command of the CLI.
func TestDrivingCommandsPrintEvents(t *testing.T) {
	for i := range command.Table {
		c := &command.Table[i]
		if (c.Drives || c.Events) && c.CLI == nil {
			t.Errorf("/%s drives a run but has no CLI form", c.Name)
			continue
		}
		if !c.Events {
			continue
		}
		cmd, _, err := newRoot().Find(c.CLI)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags([]string{"--output", "jsonl"}); err != nil {
			t.Errorf("/%s: ultra %s --output jsonl: %v", c.Name, strings.Join(c.CLI, " "), err)
		}
		if !command.PrintsEvents(append(slices.Clone(c.CLI), "RUN")) {
			t.Errorf("/%s: PrintsEvents does not know ultra %s", c.Name, strings.Join(c.CLI, " "))
		}
	}
	for _, argv := range [][]string{{"pause", "RUN"}, {"steer", "RUN"}, {"tasks"}, {}} {
		if command.PrintsEvents(argv) {
			t.Errorf("PrintsEvents(%q)", argv)
		}
	}
}

func TestEveryCLICommandHasASlashFormOrAReason(t *testing.T) {
	slash := map[string]string{} // top-level CLI command → a slash command that runs it
	for i := range command.Table {
		if c := &command.Table[i]; c.CLI != nil {
			slash[c.CLI[0]] = "/" + c.Name
		}
	}
	top := map[string]bool{}
	for _, c := range newRoot().Commands() {
		name := c.Name()
		if c.Hidden || name == "help" || name == "completion" {
			continue
		}
		top[name] = true
		if slash[name] == "" && command.CLIOnly[name] == "" {
			t.Errorf("ultra %s has no slash command in command.Table and no entry in command.CLIOnly saying why", name)
		}
	}
	for name := range command.CLIOnly {
		if !top[name] {
			t.Errorf("command.CLIOnly names %q, which is not a command of ultra", name)
		}
	}
	for name, s := range slash {
		if !top[name] {
			t.Errorf("%s runs ultra %s, which is not a command of ultra", s, name)
		}
	}
}

func TestEveryCommandIsOnTheTUI(t *testing.T) {
	for i := range command.Table {
		c := &command.Table[i]
		for _, s := range []command.Surface{command.TUI, command.Web, command.ACP} {
			if !c.On(s) && c.Absent[s] == "" {
				t.Errorf("/%s is not on the %s and does not say why (Absent)", c.Name, s)
			}
		}
	}
}

func TestCommandsDocListsEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), `\|`, "|") // a | in a table cell is written \|
	for i := range command.Table {
		c := &command.Table[i]
		if !strings.Contains(doc, "`"+c.Synopsis()) {
			t.Errorf("docs/commands.md does not list /%s as `%s`", c.Name, c.Synopsis())
		}
	}
	for name := range command.CLIOnly {
		if !strings.Contains(doc, "`ultra "+name+"`") {
			t.Errorf("docs/commands.md does not list `ultra %s` among the commands without a slash form", name)
		}
	}
}

// An editor's slash commands over ACP run the same argv as the table's
// CLI form, and that argv is a command line ultra takes.
func TestACPSlashCommandsMatchTheCLI(t *testing.T) {
	offered := 0
	for _, line := range parityLines {
		inv, err := command.Parse(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got, _, aerr := acp.Argv(line, parityRun)
		if !inv.Cmd.On(command.ACP) {
			if aerr == nil {
				t.Errorf("%s: not on the ACP surface, yet ACP runs %q", line, got)
			}
			continue
		}
		want, err := inv.CLIArgs(parityRun)
		if inv.IsLocal() {
			if aerr == nil {
				t.Errorf("%s: local, yet ACP runs %q", line, got)
			}
			continue
		}
		if err != nil || aerr != nil {
			t.Errorf("%s: CLI %v, ACP %v", line, err, aerr)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: ACP runs %q, the CLI form is %q", line, got, want)
		}
		checkArgv(t, line, inv.Cmd, inv, got)
		offered++
	}
	var names []string
	for _, c := range acp.Commands() {
		names = append(names, c.Name)
		if cmd, ok := command.Lookup(c.Name); !ok || !cmd.On(command.ACP) {
			t.Errorf("ACP offers /%s, which the table does not offer there", c.Name)
		}
	}
	for i := range command.Table {
		if c := &command.Table[i]; c.On(command.ACP) && !slices.Contains(names, c.Name) {
			t.Errorf("/%s is on the ACP surface but not in available_commands_update", c.Name)
		}
	}
	if offered < 30 {
		t.Fatalf("only %d parity lines ran through ACP", offered)
	}
}
