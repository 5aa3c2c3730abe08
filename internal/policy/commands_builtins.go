package policy

import (
	"fmt"
	"strings"
)

func checkDate(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal:    "dfr",
		shortOptVal: "I",
		// --resolution takes no value: its next word is an operand.
		longVal: []string{"date", "file", "reference", "rfc-3339"},
		badShort: map[byte]string{
			's': "date -s sets the system clock",
			't': "date -t sets the kernel's time zone (BSD date)",
		},
		badLong: map[string]string{"set": "date --set sets the system clock"},
	})
	if why != "" {
		return why
	}
	for _, a := range p.operands {
		if !strings.HasPrefix(a.prefix, "+") {
			return fmt.Sprintf("date with an operand other than +FORMAT (%s) sets the clock", a.text)
		}
	}
	return ""
}

func checkHostname(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		badShort: map[byte]string{'F': "hostname -F sets the host name", 'b': "hostname -b sets the host name"},
		badLong:  map[string]string{"file": "hostname --file sets the host name", "boot": "hostname --boot sets the host name"},
	})
	if why != "" {
		return why
	}
	if len(p.operands) > 0 {
		return fmt.Sprintf("hostname with an argument (%s) sets the host name", p.operands[0].text)
	}
	return ""
}

// checkArch allows arch only to print the machine type: macOS arch runs
// the program it is given (arch -x86_64 prog).
func checkArch(_ *classifier, name string, args []arg) string {
	if len(args) == 0 || len(args) == 1 && args[0].static && (args[0].lit == "--help" || args[0].lit == "--version") {
		return ""
	}
	return "arch with arguments runs a program on macOS; use `uname -m` to print the machine type"
}

func checkPrintf(_ *classifier, name string, args []arg) string {
	if len(args) == 0 {
		return ""
	}
	a := args[0]
	if !a.static && !a.dashSafe() {
		return notLiteral(name, a)
	}
	if a.static && strings.HasPrefix(a.lit, "-v") {
		return "printf -v assigns a shell variable; print the value instead"
	}
	return ""
}

// checkRead allows read with plain variable names: a subscripted name
// would be evaluated and could run commands.
func checkRead(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{shortVal: "adinNptu"})
	if why != "" {
		return why
	}
	names := append(p.values("-a"), p.operands...)
	for _, a := range names {
		if !a.static || !isIdent(a.lit) {
			return fmt.Sprintf("read needs plain variable names, not %s", a.text)
		}
	}
	return ""
}

// safeShellOptions are the set -o options allowed: none of them makes
// bash run anything or changes how commands are found.
var safeShellOptions = map[string]bool{"errexit": true, "nounset": true, "pipefail": true,
	"xtrace": true, "verbose": true, "noclobber": true, "noglob": true}

// checkSet allows setting a few shell options.
func checkSet(_ *classifier, name string, args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return fmt.Sprintf("set with a computed argument (%s) is not allowed", a.text)
		}
		l := a.lit
		if len(l) < 2 || (l[0] != '-' && l[0] != '+') || l == "--" {
			return "set with arguments replaces the positional parameters; not allowed"
		}
		for _, ch := range l[1:] {
			switch {
			case ch == 'o':
				if i+1 < len(args) {
					i++
					if n := args[i]; !n.static || !safeShellOptions[n.lit] {
						return fmt.Sprintf("set -o %s is not allowed", n.text)
					}
				}
			case strings.ContainsRune("euxvCf", ch):
			default:
				return fmt.Sprintf("set -%c is not allowed", ch)
			}
		}
	}
	return ""
}

// checkTest guards test and [ against -v and -R, which evaluate array
// subscripts in their operand and can run commands.
func checkTest(_ *classifier, name string, args []arg) string {
	binary := map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true,
		"-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true,
		"-nt": true, "-ot": true, "-ef": true, "-a": true, "-o": true, "]": true, ")": true}
	for i, a := range args {
		next := arg{static: true, lit: "]"}
		if i+1 < len(args) {
			next = args[i+1]
		}
		if a.static && (a.lit == "-v" || a.lit == "-R") && !(next.static && (next.lit == "]" || next.lit == ")")) && i+1 < len(args) {
			if !safeVarRef(next) {
				return fmt.Sprintf("%s %s with a computed or subscripted name can run commands", name, a.lit)
			}
		}
		if !a.static && a.untrusted {
			if a.split {
				return fmt.Sprintf("unquoted %s in %s could expand to operators; quote it", a.text, name)
			}
			if !a.dashSafe() && i+1 < len(args) && !(next.static && binary[next.lit]) {
				return fmt.Sprintf("%s in %s could expand to an operator such as -v; compare it with = instead", a.text, name)
			}
		}
	}
	return ""
}

// checkCommand: command -v/-V only looks a name up; otherwise the named
// command runs and is judged itself.
func checkCommand(c *classifier, name string, args []arg) string {
	for i, a := range args {
		if !a.static {
			return c.checkArgs(args[i:])
		}
		switch a.lit {
		case "-v", "-V", "-pv", "-pV", "-vp", "-Vp":
			return ""
		case "-p", "--":
			continue
		}
		return c.checkArgs(args[i:])
	}
	return ""
}
