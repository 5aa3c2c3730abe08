package policy

import (
	"fmt"
	"strings"
)

// checkGo allows go list, doc, env and version, without the flags that
// build or write.
func checkGo(_ *classifier, name string, args []arg) string {
	if len(args) == 0 {
		return ""
	}
	sub := args[0]
	if !sub.static {
		return notLiteral(name, sub)
	}
	rest := args[1:]
	if why := requireDashSafe("go "+sub.lit, rest); why != "" {
		return why
	}
	flags := func(yield func(flag, value string, hasValue bool, next *arg) string) string {
		for i, a := range rest {
			if !a.static || !strings.HasPrefix(a.lit, "-") {
				continue
			}
			if a.lit == "--" {
				return ""
			}
			f, v, has := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.lit, "-"), "-"), "=")
			var next *arg
			if i+1 < len(rest) {
				next = &rest[i+1]
			}
			if why := yield(f, v, has, next); why != "" {
				return why
			}
		}
		return ""
	}
	switch sub.lit {
	case "version", "help":
		return ""
	case "doc":
		return flags(func(f, _ string, _ bool, _ *arg) string {
			if f == "http" {
				return "go doc -http starts a server"
			}
			return ""
		})
	case "env":
		return flags(func(f, _ string, _ bool, _ *arg) string {
			if f == "w" || f == "u" {
				return fmt.Sprintf("go env -%s changes the go environment file", f)
			}
			return ""
		})
	case "list":
		return flags(func(f, v string, has bool, next *arg) string {
			switch f {
			case "export", "compiled", "toolexec", "exec":
				return fmt.Sprintf("go list -%s builds packages", f)
			case "modfile":
				return "go list -modfile can rewrite a go.mod file"
			case "mod":
				if !has {
					if next == nil || !next.static {
						return "go list -mod needs a literal value"
					}
					v = next.lit
				}
				if v != "readonly" && v != "vendor" {
					return fmt.Sprintf("go list -mod=%s can change go.mod", v)
				}
			}
			return ""
		})
	}
	return fmt.Sprintf("`go %s` can build, run or write files; only go list, go doc, go env and go version are allowed", sub.lit)
}
