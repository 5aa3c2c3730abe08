package policy

import (
	"fmt"
	"path"
	"strings"

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
			for _, w := range Unwrap(words) {
				switch path.Base(w[0]) {
				case "eval", "source", ".", "exec":
					opaque = w[0] + " runs what its arguments say"
					return false
				}
				if givesCode(w) {
					opaque = path.Base(w[0]) + " is given code to run (" + strings.Join(w[1:min(len(w), 3)], " ") + ")"
					return false
				}
			}
			cmds = append(cmds, words)
		}
		return true
	})
	return cmds, opaque
}

// wrappers run the command that follows their options.
var wrappers = map[string]bool{"sudo": true, "doas": true, "env": true, "command": true, "nice": true, "nohup": true,
	"time": true, "timeout": true, "xargs": true, "setsid": true, "stdbuf": true, "ionice": true, "builtin": true}

// Unwrap is words and, for each wrapper it starts with, the command the
// wrapper runs (its options and assignments skipped loosely): "sudo env
// X=1 rm -rf d" gives that, "env X=1 rm -rf d" and "rm -rf d".
func Unwrap(words []string) [][]string {
	out := [][]string{words}
	for len(words) > 1 && wrappers[path.Base(words[0])] {
		w := path.Base(words[0])
		words = words[1:]
		for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=") ||
			(w == "timeout" && len(words[0]) > 0 && words[0][0] >= '0' && words[0][0] <= '9')) {
			words = words[1:]
		}
		if len(words) == 0 {
			break
		}
		out = append(out, words)
	}
	return out
}

// givesCode says words run a shell or an interpreter on code given in
// them (bash -c '…', python -c '…', node -e '…').
func givesCode(words []string) bool {
	name := strings.TrimRight(path.Base(words[0]), "0123456789.")
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "perl", "ruby", "node", "php", "pwsh", "deno", "bun", "lua", "Rscript", "osascript":
	default:
		return false
	}
	for _, a := range words[1:] {
		if !strings.HasPrefix(a, "-") || a == "--" {
			break
		}
		if strings.ContainsAny(strings.TrimLeft(a, "-"), "ceE") && !strings.HasPrefix(a, "--") || a == "--eval" || a == "--command" {
			return true
		}
	}
	return false
}
