package command

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
)

func TestTableIsWellFormed(t *testing.T) {
	names := map[string]bool{}
	for i := range Table {
		c := &Table[i]
		if c.Name == "" || strings.HasPrefix(c.Name, "/") || names[c.Name] {
			t.Errorf("command %d: bad or repeated name %q", i, c.Name)
		}
		names[c.Name] = true
		if c.Summary == "" {
			t.Errorf("/%s: no summary", c.Name)
		}
		if (c.CLI == nil) == (c.Local == "") {
			t.Errorf("/%s: a command has a CLI form or says why not (CLI %v, Local %q)", c.Name, c.CLI, c.Local)
		}
		if c.On(CLI) != (c.CLI != nil) {
			t.Errorf("/%s: the CLI is among its surfaces exactly when it has a CLI form", c.Name)
		}
		for _, s := range c.Surfaces {
			if !slices.Contains(AllSurfaces, s) {
				t.Errorf("/%s: unknown surface %q", c.Name, s)
			}
		}
		if c.RunOptional && !c.Run {
			t.Errorf("/%s: RunOptional without Run", c.Name)
		}
		if c.Axes && !c.Run {
			t.Errorf("/%s: an Axes command acts on a run", c.Name)
		}
		flags := map[string]bool{}
		for _, f := range c.Flags {
			if f.Name == "" || strings.HasPrefix(f.Name, "-") || flags[f.Name] || f.Usage == "" {
				t.Errorf("/%s: bad or repeated flag %+v", c.Name, f)
			}
			flags[f.Name] = true
			if f.Values != nil && (!f.Value || f.noun == "") {
				t.Errorf("/%s --%s: a flag with allowed values takes a value and names what it is", c.Name, f.Name)
			}
		}
		if len(c.ArgValues) > 0 && c.argNoun == "" {
			t.Errorf("/%s: positional values without a noun", c.Name)
		}
	}
	if len(CLIOnly) == 0 {
		t.Fatal("CLIOnly is empty")
	}
	for name, why := range CLIOnly {
		if why == "" {
			t.Errorf("CLIOnly[%q] gives no reason", name)
		}
		for i := range Table {
			if len(Table[i].CLI) > 0 && Table[i].CLI[0] == name {
				t.Errorf("%q is in CLIOnly and the CLI form of /%s", name, Table[i].Name)
			}
		}
	}
}

func TestAxisValuesComeFromAxes(t *testing.T) {
	for name, axis := range map[string]string{"mode": axes.Mode, "control": axes.Control, "permission-profile": axes.Permission, "model-mode": axes.ModelMode} {
		c, ok := Lookup(name)
		if !ok {
			t.Fatalf("no /%s", name)
		}
		if !reflect.DeepEqual(c.ArgValues, axes.Values[axis]) {
			t.Errorf("/%s values %v, want %v", name, c.ArgValues, axes.Values[axis])
		}
		steer, _ := Lookup("steer")
		if f, ok := steer.Flag(name); !ok || !reflect.DeepEqual(f.Values, axes.Values[axis]) {
			t.Errorf("/steer --%s values %v", name, f)
		}
	}
	steer, _ := Lookup("steer")
	if f, _ := steer.Flag("scope"); !reflect.DeepEqual(f.Values, axes.Scopes) {
		t.Errorf("--scope values %v", f.Values)
	}
}

func TestLookup(t *testing.T) {
	for _, n := range []string{"mode", "/mode"} {
		if c, ok := Lookup(n); !ok || c.Name != "mode" || c != &Table[0] {
			t.Errorf("Lookup(%q) = %v, %v", n, c, ok)
		}
	}
	if _, ok := Lookup("/ultra"); ok {
		t.Error("Lookup(/ultra) found something")
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		line  string
		cmd   string
		args  []string
		flags map[string]string
	}{
		{"/mode repair --autonomous --permission-profile normal", "mode", []string{"repair"}, map[string]string{"autonomous": "true", "permission-profile": "normal"}},
		{"  /mode   build  ", "mode", []string{"build"}, map[string]string{}},
		{"mode plan --run 2026", "mode", []string{"plan"}, map[string]string{"run": "2026"}},
		{"/control Manual", "control", []string{"manual"}, map[string]string{}},
		{"/steer abc --scope=now --reason 'read only from here' --model-mode DEEP", "steer", []string{"abc"}, map[string]string{"scope": "now", "reason": "read only from here", "model-mode": "deep"}},
		{`/resume abc "try \"x\" first" and\ then`, "resume", []string{"abc", `try "x" first`, "and then"}, map[string]string{}},
		{`/resume abc it\'s 'a "b"' "c\d"`, "resume", []string{"abc", "it's", `a "b"`, `c\d`}, map[string]string{}},
		{"/resume --run abc -- --weird idea", "resume", []string{"--weird", "idea"}, map[string]string{"run": "abc"}},
		{"/deny do not run rm -rf --call c3", "deny", []string{"do", "not", "run", "rm", "-rf"}, map[string]string{"call": "c3"}},
		{`/deny "--force is not allowed"`, "deny", []string{"--force is not allowed"}, map[string]string{}},
		{"/steer --reason=--x --control assisted", "steer", nil, map[string]string{"reason": "--x", "control": "assisted"}},
		{"/doctor FIX --dry-run", "doctor", []string{"fix"}, map[string]string{"dry-run": "true"}},
		{"/approve --autonomous=false --call c1", "approve", nil, map[string]string{"call": "c1"}},
		{"/tasks --all=true", "tasks", nil, map[string]string{"all": "true"}},
		{"/review --base main --head feature", "review", nil, map[string]string{"base": "main", "head": "feature"}},
		{"/model gpt-5", "model", []string{"gpt-5"}, map[string]string{}},
		{"/help /mode", "help", []string{"/mode"}, map[string]string{}},
		{"/autonomous", "autonomous", nil, map[string]string{}},
	}
	for _, c := range cases {
		inv, err := Parse(c.line)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.line, err)
			continue
		}
		if inv.Cmd.Name != c.cmd || !slices.Equal(inv.Args, c.args) || !maps.Equal(inv.Flags, c.flags) {
			t.Errorf("Parse(%q) = /%s %q %v, want /%s %q %v", c.line, inv.Cmd.Name, inv.Args, inv.Flags, c.cmd, c.args, c.flags)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ line, err string }{
		{"", "no command: type /help for the commands"},
		{"/foo", "unknown command /foo (see /help)"},
		{"foo bar", "unknown command /foo (see /help)"},
		{"/mode build --foo", "/mode: unknown flag --foo (flags: --autonomous, --assisted, --manual, --control, --permission-profile, --model-mode, --scope, --reason, --run)"},
		{"/steer --scope", "/steer: --scope needs a value (now, after-current-tool, after-current-unit, next-milestone)"},
		{"/steer --scope --mode build", "/steer: --scope needs a value (now, after-current-tool, after-current-unit, next-milestone)"},
		{"/mode build --reason", "/mode: --reason needs a value (TEXT)"},
		{"/mode build --reason=", "/mode: --reason needs a value (TEXT)"},
		{"/control fast", `/control: "fast" is not a run control (manual, assisted, autonomous)`},
		{"/mode build --scope later", `/mode: "later" is not a steering scope (now, after-current-tool, after-current-unit, next-milestone)`},
		{"/steer --permission-profile root", `/steer: "root" is not a permission profile (restricted, normal, trusted, unrestricted)`},
		{`/resume abc "try it`, `/resume: unterminated quote (") opened at column 13`},
		{`/deny it's wrong`, `/deny: unterminated quote (') opened at column 9`},
		{`/resume abc go\`, "/resume: a backslash ends the line at column 15"},
		{"/mode", "/mode: give a work mode (chat, plan, build, review, repair, research)"},
		{"/model-mode fast smart", `/model-mode: unexpected argument "smart" (usage: /model-mode MODEL_MODE)`},
		{"/status a b", `/status: unexpected argument "b" (usage: /status [RUN])`},
		{"/attach", "/attach: give the run to attach to (usage: /attach RUN)"},
		{"/deny", "/deny: give the reason the model reads (usage: /deny REASON…)"},
		{"/deny ''", "/deny: give the reason the model reads (usage: /deny REASON…)"},
		{"/mode build --autonomous --control manual", "/mode: --autonomous and --control each set the run control; give one"},
		{"/steer --manual --assisted", "/steer: --assisted and --manual each set the run control; give one"},
		{"/steer abc", "/steer: nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)"},
		{"/steer abc --scope now", "/steer: nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)"},
		{"/mode build --scope now --scope=now", "/mode: --scope is given twice"},
		{"/tasks --all=yes", `/tasks: --all is a switch and takes no value (got "yes")`},
		{"/status --x", "/status: unknown flag --x (it takes no flags)"},
		{"/status -n 3", "/status: unknown flag -n (it takes no flags)"},
		{"/doctor cure", `/doctor: "cure" is not a doctor action (fix, heal)`},
		{"/doctor --dry-run", "/doctor: --dry-run goes with fix (/doctor fix --dry-run)"},
		{"/doctor heal --dry-run", "/doctor: --dry-run goes with fix (/doctor fix --dry-run)"},
		{"/review abc --base main", "/review: give a run or a range (--base, --head), not both"},
		{"/review --head x", "/review: --head needs --base (the range is --base A --head B)"},
		{"/approve --call c1 --autonomous", "/approve: --autonomous and --permission-profile go with accepting a plan, not with --call, --for-run or --read-only"},
		{"/approve --for-run --read-only", "/approve: --for-run and --read-only are two answers: --for-run allows the call's tool, --read-only every read-only call"},
		{"/help nothing", "/help: unknown command /nothing (see /help)"},
		{"/mode build --run ''", "/mode: --run needs a value (ID)"},
		{"/pause -- -x", `/pause: "-x" is not a run id`},
	}
	for _, c := range cases {
		_, err := Parse(c.line)
		if err == nil || err.Error() != c.err {
			t.Errorf("Parse(%q)\n got  %v\n want %s", c.line, err, c.err)
		}
	}
}

func TestCLIArgs(t *testing.T) {
	cases := []struct {
		line, run string
		want      []string
		err       string
	}{
		{"/mode repair --autonomous --permission-profile normal", "r1", []string{"steer", "r1", "--mode", "repair", "--control", "autonomous", "--permission-profile", "normal"}, ""},
		{"/mode plan --run r2 --scope now --reason 'from here'", "r1", []string{"steer", "r2", "--mode", "plan", "--scope", "now", "--reason", "from here"}, ""},
		{"/mode build", "", nil, "/mode needs a run: attach to one or give its id"},
		{"/control assisted", "r1", []string{"steer", "r1", "--control", "assisted"}, ""},
		{"/permission-profile trusted --manual", "r1", []string{"steer", "r1", "--permission-profile", "trusted", "--control", "manual"}, ""},
		{"/model-mode deep", "r1", []string{"steer", "r1", "--model-mode", "deep"}, ""},
		{"/steer r3 --mode repair --assisted --reason -x", "r1", []string{"steer", "r3", "--mode", "repair", "--control", "assisted", "--reason=-x"}, ""},
		{"/steer --control manual --scope next-milestone", "r1", []string{"steer", "r1", "--control", "manual", "--scope", "next-milestone"}, ""},
		{"/autonomous", "r1", []string{"autonomous", "r1"}, ""},
		{"/autonomous r9 --scope now", "", []string{"autonomous", "r9", "--scope", "now"}, ""},
		{"/next", "r1", []string{"next", "r1"}, ""},
		{"/pause", "", nil, "/pause needs a run: attach to one or give its id"},
		{"/stop --reason 'enough'", "r1", []string{"stop", "r1", "--reason", "enough"}, ""},
		{"/approve", "r1", []string{"approve", "r1"}, ""},
		{"/approve r2 --call c1 --for-run", "r1", []string{"approve", "r2", "--call", "c1", "--for-run"}, ""},
		{"/approve --autonomous --permission-profile trusted", "r1", []string{"approve", "r1", "--autonomous", "--permission-profile", "trusted"}, ""},
		{"/deny not the lockfile --call c3", "r1", []string{"approve", "r1", "--call", "c3", "--deny", "not the lockfile"}, ""},
		{"/deny -- -f is dangerous", "r1", []string{"approve", "r1", "--deny=-f is dangerous"}, ""},
		{"/deny no --run r2", "", []string{"approve", "r2", "--deny", "no"}, ""},
		{"/cancel --reason obsolete", "r1", []string{"cancel", "r1", "--reason", "obsolete"}, ""},
		{"/attach r5", "r1", []string{"attach", "r5"}, ""},
		{"/resume", "r1", []string{"resume", "r1"}, ""},
		{"/resume 20261124-1015 try the other parser", "r1", []string{"resume", "20261124-1015", "try the other parser"}, ""},
		// A first word that is no run id is guidance for the run on screen.
		{"/resume try the other parser", "r1", []string{"resume", "r1", "try the other parser"}, ""},
		{"/resume --run r2 try it", "", []string{"resume", "r2", "try it"}, ""},
		{"/resume --run r2 -- -v was wrong", "", []string{"resume", "r2", "--", "-v was wrong"}, ""},
		{"/resume", "", nil, "/resume needs a run: attach to one or give its id"},
		{"/tasks --all", "r1", []string{"tasks", "--all"}, ""},
		{"/status", "r1", []string{"status", "r1"}, ""},
		{"/status", "", nil, "/status needs a run: attach to one or give its id"},
		{"/goals", "", []string{"goals"}, ""},
		{"/goals", "r1", []string{"goals", "r1"}, ""},
		{"/review", "", []string{"review"}, ""},
		{"/review", "r1", []string{"review", "r1"}, ""},
		{"/review --base main --head feature", "r1", []string{"review", "--base", "main", "--head", "feature"}, ""},
		{"/diff --stat --committed", "r1", []string{"diff", "r1", "--stat", "--committed"}, ""},
		{"/land r4", "r1", []string{"land", "r4"}, ""},
		{"/undo --to-last-green --dry-run", "r1", []string{"undo", "r1", "--to-last-green", "--dry-run"}, ""},
		{"/doctor", "r1", []string{"doctor"}, ""},
		{"/doctor fix --dry-run", "", []string{"doctor", "fix", "--dry-run"}, ""},
		{"/doctor heal", "", []string{"doctor", "heal"}, ""},
		{"/repair", "", []string{"repair"}, ""},
		{"/repair --autonomous", "r1", []string{"repair", "r1", "--autonomous"}, ""},
		{"/model", "r1", []string{"models"}, ""},
		{"/model gpt-5", "r1", nil, "/model gpt-5 sets the next run's model in the TUI; on the command line pass --model gpt-5 to ultra run"},
		{"/clear", "r1", nil, "/clear clears the conversation on screen; it has no command-line form"},
		{"/help", "", nil, "/help shows the slash commands on screen (on the command line: ultra --help); it has no command-line form"},
	}
	for _, c := range cases {
		inv, err := Parse(c.line)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.line, err)
			continue
		}
		got, err := inv.CLIArgs(c.run)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("CLIArgs(%q, %q) = %q, %v; want error %s", c.line, c.run, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("CLIArgs(%q, %q) = %q, %v; want %q", c.line, c.run, got, err, c.want)
		}
	}
	if _, err := (Invocation{}).CLIArgs("r1"); err == nil {
		t.Error("an invocation without a command has no argv")
	}
	if _, err := (Invocation{Cmd: &Table[0], Flags: map[string]string{}}).CLIArgs("r1"); err == nil || err.Error() != "/mode: give a work mode (usage: /mode MODE)" {
		t.Errorf("an axis command without its value: %v", err)
	}
	if _, err := (Invocation{Cmd: mustLookup(t, "status"), Args: []string{"--json"}}).CLIArgs(""); err == nil || err.Error() != `/status: "--json" is not a run id` {
		t.Errorf("a run id that reads as a flag: %v", err)
	}
}

func mustLookup(t *testing.T, name string) *Command {
	t.Helper()
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("no /%s", name)
	}
	return c
}

func TestLocal(t *testing.T) {
	for line, local := range map[string]bool{"/clear": true, "/help": true, "/help mode": true, "/model": false, "/model gpt-5": true, "/status": false, "/tasks": false} {
		inv, err := Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		if inv.IsLocal() != local {
			t.Errorf("%s: IsLocal %v", line, inv.IsLocal())
		}
		_, err = inv.CLIArgs("r1")
		if local != errors.Is(err, ErrLocal) {
			t.Errorf("%s: CLIArgs error %v, local %v", line, err, local)
		}
	}
}

func TestAxisChanges(t *testing.T) {
	cases := []struct {
		line string
		want map[string]string
		err  string
	}{
		{"/mode repair --autonomous --permission-profile normal", map[string]string{axes.Mode: "repair", axes.Control: "autonomous", axes.Permission: "normal"}, ""},
		{"/control manual --model-mode fast", map[string]string{axes.Control: "manual", axes.ModelMode: "fast"}, ""},
		{"/permission-profile restricted --scope now", map[string]string{axes.Permission: "restricted"}, ""},
		{"/model-mode deep --assisted", map[string]string{axes.ModelMode: "deep", axes.Control: "assisted"}, ""},
		{"/steer --mode plan --manual --reason x", map[string]string{axes.Mode: "plan", axes.Control: "manual"}, ""},
		{"/autonomous", map[string]string{axes.Control: "autonomous"}, ""},
		{"/autonomous r1 --scope now", map[string]string{axes.Control: "autonomous"}, ""},
		{"/status", nil, "/status changes no axes"},
		{"/repair", nil, "/repair changes no axes"},
	}
	for _, c := range cases {
		inv, err := Parse(c.line)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.line, err)
			continue
		}
		got, err := inv.AxisChanges()
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("AxisChanges(%q) = %v, %v; want error %s", c.line, got, err, c.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("AxisChanges(%q) = %v, %v; want %v", c.line, got, err, c.want)
		}
		if _, err := axes.Default.Steer(got); err != nil {
			t.Errorf("AxisChanges(%q) = %v, which axes refuses: %v", c.line, got, err)
		}
	}
	// Invocations built by hand are checked too.
	bad := []struct {
		inv Invocation
		err string
	}{
		{Invocation{Cmd: mustLookup(t, "control"), Args: []string{"fast"}}, `/control: "fast" is not a run control (manual, assisted, autonomous)`},
		{Invocation{Cmd: mustLookup(t, "steer"), Flags: map[string]string{"mode": "ship"}}, `/steer: "ship" is not a work mode (chat, plan, build, review, repair, research)`},
		{Invocation{Cmd: mustLookup(t, "steer"), Flags: map[string]string{"scope": "now"}}, "/steer: nothing to change: name an axis (--mode, --control, --permission-profile, --model-mode)"},
		{Invocation{Cmd: mustLookup(t, "steer"), Flags: map[string]string{"control": "manual", "autonomous": "true"}}, "/steer: the run control is given twice (manual and autonomous, by --autonomous)"},
		{Invocation{}, "no command: type /help for the commands"},
	}
	for _, b := range bad {
		if _, err := b.inv.AxisChanges(); err == nil || err.Error() != b.err {
			t.Errorf("AxisChanges(%+v): %v, want %s", b.inv, err, b.err)
		}
	}
}

func TestComplete(t *testing.T) {
	cases := []struct {
		prefix string
		want   []string
	}{
		{"/mo", []string{"/mode", "/model", "/model-mode"}},
		{"mo", []string{"/mode", "/model", "/model-mode"}},
		{"/model-", []string{"/model-mode"}},
		{"/st", []string{"/status", "/steer", "/stop"}},
		{"/zz", nil},
	}
	for _, c := range cases {
		if got := Complete(c.prefix); !slices.Equal(got, c.want) {
			t.Errorf("Complete(%q) = %q, want %q", c.prefix, got, c.want)
		}
	}
	if got := Complete("/"); len(got) != len(Table) || !slices.IsSorted(got) {
		t.Errorf("Complete(/) = %q", got)
	}
}

func TestCompleteLine(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"/mo", []string{"/mode", "/model", "/model-mode"}},
		{"  /pa", []string{"  /pause"}},
		{"/mode repair --per", []string{"/mode repair --permission-profile"}},
		{"/steer --scope n", []string{"/steer --scope now", "/steer --scope next-milestone"}},
		{"/steer --scope af", []string{"/steer --scope after-current-tool", "/steer --scope after-current-unit"}},
		{"/steer --scope=no", []string{"/steer --scope=now"}},
		{"/steer --scope ", []string{"/steer --scope now", "/steer --scope after-current-tool", "/steer --scope after-current-unit", "/steer --scope next-milestone"}},
		{"/control a", []string{"/control assisted", "/control autonomous"}},
		{"/control ", []string{"/control manual", "/control assisted", "/control autonomous"}},
		{"/mode repair --permission-profile t", []string{"/mode repair --permission-profile trusted"}},
		{"/mode repair --m", []string{"/mode repair --manual", "/mode repair --model-mode"}},
		{"/mode repair --manual --m", []string{"/mode repair --manual --model-mode"}},
		{"/doctor f", []string{"/doctor fix"}},
		{"/doctor fix --d", []string{"/doctor fix --dry-run"}},
		{"/tasks ", []string{"/tasks --all"}},
		{"/diff abc --s", []string{"/diff abc --stat"}},
		{"/status ", nil},
		{"/status ab", nil},
		{"/deny 'do not", nil},
		{"/reason --x", nil},
		{"/steer -- --sc", nil},
		{"/mode plan --reason ", nil},
		{"/mode plan --scope x", nil},
	}
	for _, c := range cases {
		if got := CompleteLine(c.line); !slices.Equal(got, c.want) {
			t.Errorf("CompleteLine(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestHelpAndUsage(t *testing.T) {
	h := Help()
	for i := range Table {
		c := &Table[i]
		if !strings.Contains(h, c.Synopsis()+" ") || !strings.Contains(h, c.Summary) {
			t.Errorf("Help misses /%s", c.Name)
		}
		u := c.Usage()
		for _, f := range c.Flags {
			if !strings.Contains(u, "--"+f.Name) {
				t.Errorf("Usage of /%s misses --%s", c.Name, f.Name)
			}
		}
	}
	// Listed in table order.
	last := -1
	for i := range Table {
		at := strings.Index(h, "  /"+Table[i].Name+" ")
		if at < last {
			t.Errorf("Help lists /%s out of order", Table[i].Name)
		}
		last = at
	}
	u := mustLookup(t, "mode").Usage()
	for _, want := range []string{"/mode MODE [flags]", "--scope SCOPE", "(default after-current-tool): now, after-current-tool, after-current-unit, next-milestone", "--run ID", "command line: ultra steer"} {
		if !strings.Contains(u, want) {
			t.Errorf("Usage of /mode lacks %q:\n%s", want, u)
		}
	}
	if u := mustLookup(t, "clear").Usage(); !strings.Contains(u, "no command-line form: it clears the conversation on screen") {
		t.Errorf("Usage of /clear:\n%s", u)
	}
}
