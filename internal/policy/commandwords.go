package policy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// SimpleCommands are the simple commands of a bash command line, each as
// the words it runs, for matching against a person's permission rules.
// opaque says why some command cannot be read from the text alone (a
// word that expands at run time, a command substitution, a function, eval
// or source, a shell or interpreter given code): "" when every command is
// in the list. It is pure.
func SimpleCommands(command string) (cmds [][]string, opaque string) {
	f, err := parse(command)
	if err != nil {
		return nil, "it does not parse: " + err.Error()
	}
	c := newClassifier(command, f, 0, nil)
	syntax.Walk(f, func(n syntax.Node) bool {
		if opaque != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			opaque = "it runs a command substitution $(…)"
		case *syntax.ProcSubst:
			opaque = "it runs a process substitution <(…)"
		case *syntax.FuncDecl:
			opaque = "it declares a function"
		case *syntax.ArithmCmd, *syntax.LetClause:
			opaque = "arithmetic evaluates what variables hold, which can run commands"
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				opaque = "[[ … -eq … ]] evaluates what variables hold, which can run commands"
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true // assignments alone
			}
			var words []string
			for _, w := range n.Args {
				a := c.analyse(w)
				if !a.static || a.multi || a.split || a.untrusted {
					opaque = fmt.Sprintf("the word %s expands when it runs", a.text)
					return false
				}
				words = append(words, a.lit)
			}
			ws, why := Unwrapped(words)
			if why != "" {
				opaque = why
				return false
			}
			for _, w := range ws {
				if opaque = hidesCode(w); opaque != "" {
					return false
				}
			}
			cmds = append(cmds, words)
		}
		return true
	})
	return cmds, opaque
}

// wrapper is how a command that runs another reads its words: the
// options that take a value (short letters, long words), the operands
// before the command (a duration, a lock file, a new root), and the
// options that make it run a string rather than words (flock -c).
type wrapper struct {
	short    string
	long     []string
	operands int
	strings  []string
}

// wrappers run the command that follows their options and operands.
var wrappers = map[string]wrapper{
	"sudo":    {short: "ugCDhprtUT", long: []string{"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout"}},
	"doas":    {short: "uC"},
	"env":     {short: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, strings: []string{"-S", "--split-string"}},
	"command": {}, "builtin": {}, "nohup": {}, "setsid": {}, "busybox": {}, "pkexec": {short: "", long: []string{"--user"}},
	"nice":      {short: "n", long: []string{"--adjustment"}},
	"time":      {short: "fo", long: []string{"--format", "--output"}},
	"timeout":   {short: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
	"xargs":     {short: "IELPadns", long: []string{"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--replace", "--process-slot-var"}},
	"stdbuf":    {short: "ioe", long: []string{"--input", "--output", "--error"}},
	"ionice":    {short: "cnp", long: []string{"--class", "--classdata", "--pid"}},
	"chrt":      {operands: 1},
	"taskset":   {operands: 1},
	"flock":     {short: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}, operands: 1, strings: []string{"-c", "--command"}},
	"unshare":   {short: "SGRw", long: []string{"--setuid", "--setgid", "--root", "--wd"}},
	"prlimit":   {long: []string{"--pid"}},
	"setarch":   {operands: 1},
	"setpriv":   {},
	"ssh-agent": {short: "aEPt"},
	"catchsegv": {}, "stdbuf2": {},
	"strace":  {short: "abeEIoOpPsSuUX", long: []string{"--output", "--trace"}},
	"ltrace":  {short: "aAeEnopsuDlx", long: []string{"--output"}},
	"chroot":  {long: []string{"--userspec", "--groups"}, operands: 1},
	"runuser": {short: "ugsc", long: []string{"--user", "--group", "--shell", "--command"}, strings: []string{"-c", "--command"}},
	"su":      {short: "cgsG", long: []string{"--command", "--group", "--shell", "--supp-group"}, strings: []string{"-c", "--command"}},
}

// runsAString are commands that run their arguments, joined, as a shell
// line or a program ultra cannot read: nothing of them can be matched.
var runsAString = map[string]string{
	"watch": "watch runs its arguments with sh -c", "sg": "sg runs its command with sh -c", "parallel": "parallel runs its arguments as shell lines",
	"trap": "trap runs its argument later", "eval": "eval runs what its arguments say", "source": "source runs a file's lines",
	".": ". runs a file's lines", "exec": "exec runs what its arguments say",
	"script": "script runs a shell, or its -c string", "hash": "hash -p makes a name run another program",
	"alias": "alias makes a name run another command", "mapfile": "mapfile -C runs a callback", "readarray": "readarray -C runs a callback",
	"enable": "enable loads builtins", "coproc": "coproc runs a command ultra reads apart",
}

// Unwrap is words and, for each wrapper it starts with, the command the
// wrapper runs: "sudo -u a env X=1 rm -rf d" gives that, "env X=1 rm -rf
// d" and "rm -rf d"; and the commands find runs (-exec … ;).
func Unwrap(words []string) [][]string {
	out, _ := Unwrapped(words)
	return out
}

// Unwrapped is Unwrap, and why the commands cannot all be read (a
// wrapper told to run a string, an option it does not know the shape of
// before its command) when that is so.
func Unwrapped(words []string) ([][]string, string) {
	out := [][]string{words}
	for len(words) > 1 {
		name := path.Base(words[0])
		if name == "find" {
			return append(out, findExecs(words)...), ""
		}
		w, ok := wrappers[name]
		if !ok {
			break
		}
		rest, why := w.command(name, words[1:])
		if why != "" {
			return out, why
		}
		if len(rest) == 0 {
			break
		}
		words = rest
		out = append(out, words)
	}
	if len(words) > 0 && path.Base(words[0]) == "find" && len(out) > 1 {
		out = append(out, findExecs(words)...)
	}
	return out, ""
}

// command is the command wrapper w (called name) runs, of args, the
// words after its name; why is set when it runs a string instead.
func (w wrapper) command(name string, args []string) ([]string, string) {
	operands := w.operands
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			args = args[1:]
			for ; operands > 0 && len(args) > 0; operands-- {
				args = args[1:]
			}
			return args, ""
		case strings.HasPrefix(a, "--"):
			k, _, hasValue := strings.Cut(a, "=")
			if slices.Contains(w.strings, k) {
				return nil, name + " " + k + " runs a string as a command"
			}
			args = args[1:]
			if !hasValue && slices.Contains(w.long, k) && len(args) > 0 {
				args = args[1:]
			}
		case len(a) > 1 && a[0] == '-':
			args = args[1:]
			for i := 1; i < len(a); i++ {
				if slices.Contains(w.strings, "-"+a[i:i+1]) {
					return nil, name + " " + a + " runs a string as a command"
				}
				if strings.IndexByte(w.short, a[i]) >= 0 {
					if i == len(a)-1 && len(args) > 0 {
						args = args[1:] // the value is the next word
					}
					break // the rest of the word is the value
				}
			}
		case strings.Contains(a, "=") && (name == "env" || name == "sudo" || name == "doas"):
			args = args[1:] // an assignment
		case operands > 0:
			args, operands = args[1:], operands-1
		default:
			return args, ""
		}
	}
	return nil, ""
}

// findExecs are the commands find's -exec, -execdir, -ok and -okdir run.
func findExecs(words []string) [][]string {
	var out [][]string
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(words) && words[j] != ";" && words[j] != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, Unwrap(words[i+1:j])...)
			}
			i = j
		}
	}
	return out
}

// shells and interpreters run code given in their words (-c, -e), or
// read it from their input when they are given no file.
var (
	codeShells       = []string{"sh", "bash", "rbash", "zsh", "dash", "ash", "ksh", "mksh", "yash", "fish", "csh", "tcsh", "pwsh"}
	codeInterpreters = []string{"python", "perl", "ruby", "node", "nodejs", "php", "deno", "bun", "lua", "Rscript", "osascript", "tclsh", "irb", "awk", "gawk", "mawk", "nawk"}
)

// hidesCode says why words run code ultra cannot read from the line: a
// shell or interpreter given code (bash -c '…', python -c '…'), reading
// it from its input (sh < f, bash <<< '…', a pipe into python), awk
// running commands from its program, a command that runs a string; ""
// when they do not.
func hidesCode(words []string) string {
	base := path.Base(words[0])
	if why, ok := runsAString[base]; ok {
		return why
	}
	if why := runsOnTheSide(base, words[1:]); why != "" {
		return why
	}
	name := strings.TrimRight(base, "0123456789.")
	isShell, isInterp := slices.Contains(codeShells, name), slices.Contains(codeInterpreters, name)
	if !isShell && !isInterp {
		return ""
	}
	awk := strings.HasSuffix(name, "awk")
	args := words[1:]
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			args = args[1:]
			goto operands
		case a == "-":
			return base + " reads the code it runs from its input"
		case a == "--version" || a == "--help" || a == "-V" || (name == "node" && a == "-v"):
			return "" // it says what it is, and runs nothing
		case a == "--eval" || a == "--command" || a == "--print" || strings.EqualFold(a, "-command") ||
			(!strings.HasPrefix(a, "--") && strings.HasPrefix(a, "-") && strings.ContainsAny(a[1:], codeLetters(name))):
			return base + " is given code to run (" + strings.Join(words[1:min(len(words), 3)], " ") + ")"
		case isShell && a == "-s":
			return base + " reads the code it runs from its input"
		case name == "python" && a == "-m":
			return "" // a module: a program, like a file
		case awk && (a == "-f" || strings.HasPrefix(a, "--file")):
			return base + " runs a program file ultra cannot read"
		case awk && (a == "-F" || a == "-v"):
			args = args[min(2, len(args)):]
			continue
		case name == "python" && (a == "-W" || a == "-X"):
			args = args[min(2, len(args)):]
			continue
		case name == "perl" && (strings.HasPrefix(a, "-M") || strings.HasPrefix(a, "-m")),
			(name == "node" || name == "nodejs") && (a == "-r" || a == "--require" || strings.HasPrefix(a, "--import") || strings.Contains(a, "loader")):
			return base + " loads code its options name (" + a + ")"
		case strings.HasPrefix(a, "-") && len(a) > 1:
			args = args[1:]
			continue
		}
		break
	}
operands:
	if len(args) == 0 || args[0] == "/dev/stdin" || strings.HasPrefix(args[0], "/dev/fd/") || strings.HasPrefix(args[0], "/proc/self/fd/") {
		return base + " reads the code it runs from its input"
	}
	if (name == "deno" || name == "bun") && (args[0] == "eval" || args[0] == "repl") {
		return base + " " + args[0] + " runs code given to it"
	}
	if awk && (strings.Contains(args[0], "system") || strings.Contains(args[0], "|") || strings.Contains(args[0], "getline")) {
		return base + "'s program runs commands"
	}
	return ""
}

// codeLetters are the short options with which interpreter name runs the
// code given in its words.
func codeLetters(name string) string {
	switch name {
	case "perl":
		return "eE"
	case "node", "nodejs":
		return "ep"
	case "php":
		return "r"
	case "ruby", "lua", "Rscript", "osascript", "bun":
		return "e"
	case "awk", "gawk", "mawk", "nawk", "tclsh", "irb", "deno":
		return ""
	}
	return "c" // the shells, python
}

// sedExec matches a sed script that runs commands: the e command (after
// an address, or none), or the e flag of s///. Compiled when first
// needed: every process ultra starts runs this package's initialisation.
var sedExec = sync.OnceValue(func() *regexp.Regexp {
	addr := `([0-9]+|\$|/[^/]*/)`
	return regexp.MustCompile(`(^|[;{}\n])\s*(` + addr + `(,` + addr + `)?)?!?\s*e(\s|;|$)` +
		`|s(/[^/]*/[^/]*/|\|[^|]*\|[^|]*\||#[^#]*#[^#]*#|,[^,]*,[^,]*,)[gpiImM0-9w]*e`)
})

// runsOnTheSide says why a program that is not an interpreter runs other
// commands its words name: sed's e command, tar's checkpoint actions and
// filters.
func runsOnTheSide(base string, args []string) string {
	switch base {
	case "sed", "gsed":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && sedExec().MatchString(a) {
				return "sed's e command runs what it names"
			}
		}
	case "tar", "gtar", "bsdtar":
		for _, a := range args {
			for _, o := range []string{"--checkpoint-action", "--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "-F", "-I"} {
				if a == o || strings.HasPrefix(a, o+"=") {
					return "tar " + o + " runs a command"
				}
			}
		}
	}
	return ""
}
