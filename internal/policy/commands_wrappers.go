package policy

import (
	"fmt"
	"path"
	"strings"
)

// checkEnv allows env only to print the environment.
func checkEnv(_ *classifier, name string, args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return fmt.Sprintf("argument %s of env is computed and could name a command", a.text)
		}
		switch l := a.lit; {
		case l == "-" || l == "-i" || l == "--ignore-environment" || l == "-0" || l == "--null":
		case l == "-u" || l == "--unset":
			i++
			if i < len(args) && args[i].multi {
				return fmt.Sprintf("the value %s of env %s must be a single word; quote it", args[i].text, l)
			}
		case strings.HasPrefix(l, "--unset=") || strings.HasPrefix(l, "-u"):
		case strings.HasPrefix(l, "-"):
			return fmt.Sprintf("env %s is not allowed; env may only print the environment", l)
		case strings.Contains(l, "="):
		default:
			return fmt.Sprintf("env runs a command (`%s`); run the command directly", l)
		}
	}
	return ""
}

func checkTimeout(c *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal:      "sk",
		longVal:       []string{"signal", "kill-after"},
		stopAtOperand: true,
	})
	if why != "" || len(p.rest) < 2 {
		return why
	}
	return c.checkArgs(p.rest[1:]) // after the duration
}

func checkNice(c *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal:      "n",
		longVal:       []string{"adjustment"},
		stopAtOperand: true,
	})
	if why != "" {
		return why
	}
	return c.checkArgs(p.rest)
}

// checkXargs allows xargs only in front of a command that stays read-only
// whatever arguments it reads from its input.
func checkXargs(c *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal:    "adEILnPsJRS", // -J, -R, -S: BSD xargs
		shortOptVal: "eil",
		longVal: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
			"process-slot-var"},
		stopAtOperand: true,
	})
	if why != "" {
		return why
	}
	if len(p.rest) == 0 {
		return "" // echo
	}
	first := p.rest[0]
	if !first.static {
		return fmt.Sprintf("xargs runs a computed command (%s)", first.text)
	}
	base := path.Base(first.lit)
	if !plainSet[base] || shellOnly[base] {
		return fmt.Sprintf("xargs would run `%s` with arguments read from input; only simple read-only commands such as grep, cat or wc are allowed after xargs", base)
	}
	return c.checkArgs(p.rest)
}

// shellScript finds the script of sh -c / bash -c. ok is false with a
// reason when the invocation is not a plain -c with a literal script.
func shellScript(name string, args []arg) (script string, why string) {
	hasC := false
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return "", fmt.Sprintf("%s argument %s is computed and cannot be checked", name, a.text)
		}
		l := a.lit
		switch {
		case l == "--" || l == "-":
			i++
			break options
		case l == "--norc" || l == "--noprofile" || l == "--posix" || l == "--login":
		case strings.HasPrefix(l, "--"):
			return "", fmt.Sprintf("%s %s is not allowed", name, l)
		case len(l) > 1 && (l[0] == '-' || l[0] == '+'):
			for _, ch := range l[1:] {
				switch {
				case ch == 'c':
					hasC = true
				case ch == 'o':
					i++
					if i >= len(args) || !args[i].static || !safeShellOptions[args[i].lit] {
						return "", fmt.Sprintf("%s -o with that option is not allowed", name)
					}
				case strings.ContainsRune("euxvlfn", ch):
				default:
					return "", fmt.Sprintf("%s -%c is not allowed", name, ch)
				}
			}
		default:
			break options
		}
	}
	if !hasC {
		return "", fmt.Sprintf("`%s` without -c runs a script that cannot be checked", name)
	}
	if i >= len(args) {
		return "", ""
	}
	if !args[i].static {
		return "", fmt.Sprintf("%s -c script %s is computed and cannot be checked", name, args[i].text)
	}
	return args[i].lit, ""
}

// checkShell judges the script of sh -c / bash -c as a command line.
func checkShell(c *classifier, name string, args []arg) string {
	script, why := shellScript(name, args)
	if why != "" || script == "" {
		return why
	}
	if c.depth+1 >= maxDepth {
		return "shells are nested too deeply"
	}
	v := classify(script, c.depth+1, c.tainted)
	if !v.ReadOnly {
		return fmt.Sprintf("%s -c: %s", name, v.Reason)
	}
	return ""
}
