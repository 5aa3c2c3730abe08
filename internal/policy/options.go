package policy

import (
	"fmt"
	"strings"
)

// optSpec describes a command's GNU-style options, enough to find the
// dangerous ones and to tell option values from operands.
type optSpec struct {
	shortVal    string            // short options taking a value, attached or in the next word
	shortOptVal string            // short options whose optional value can only be attached (-i.bak)
	longVal     []string          // long options taking a value, after = or in the next word
	badShort    map[byte]string   // refused short options and why
	badLong     map[string]string // refused long options and why; abbreviations count
	// stopAtOperand: options end at the first operand, as with getopt "+".
	stopAtOperand bool
}

type opt struct {
	name  string // "-k", or "--key" (expanded when abbreviated)
	value *arg   // nil when the option took no value
	// attached: the value was part of the option's word (-k2, --key=2).
	attached bool
	// pos is the index of a short option's letter in its word: 1 when
	// the letter starts the word, more inside a cluster (-nk); 0 for a
	// long option.
	pos int
}

type parsed struct {
	opts     []opt
	operands []arg
	rest     []arg // with stopAtOperand: the first operand and all after it
}

// values returns the values given to any of the named options.
func (p parsed) values(names ...string) []arg {
	var out []arg
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n && o.value != nil {
				out = append(out, *o.value)
			}
		}
	}
	return out
}

func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

// scanOpts parses args the way GNU getopt_long does (options may follow
// operands; long options may be abbreviated) and refuses the options spec
// marks as dangerous. A computed word that could expand to an option is
// refused, since its meaning cannot be known.
func scanOpts(name string, args []arg, spec optSpec) (parsed, string) {
	var p parsed
	operand := func(i int) bool {
		if spec.stopAtOperand {
			p.rest = args[i:]
			p.operands = append(p.operands, args[i:]...)
			return true
		}
		p.operands = append(p.operands, args[i])
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !a.dashSafe() {
				return p, notLiteral(name, a)
			}
			if operand(i) {
				return p, ""
			}
			continue
		}
		l := a.lit
		switch {
		case l == "--":
			p.rest = args[i+1:]
			p.operands = append(p.operands, args[i+1:]...)
			return p, ""
		case len(l) < 2 || l[0] != '-':
			if operand(i) {
				return p, ""
			}
		case strings.HasPrefix(l, "--"):
			n, v, hasV := strings.Cut(l[2:], "=")
			for bad, why := range spec.badLong {
				if strings.HasPrefix(bad, n) {
					return p, why
				}
			}
			o := opt{name: "--" + n}
			if full, ok := expandLong(n, spec.longVal); ok {
				o.name = "--" + full
				if hasV {
					val := litArg(v)
					o.value, o.attached = &val, true
				} else if i+1 < len(args) {
					i++
					if args[i].multi {
						return p, fmt.Sprintf("the value %s of %s %s must be a single word; quote it", args[i].text, name, l)
					}
					o.value = &args[i]
				}
			}
			p.opts = append(p.opts, o)
		default:
			for j := 1; j < len(l); j++ {
				ch := l[j]
				if why, bad := spec.badShort[ch]; bad {
					return p, why
				}
				o := opt{name: "-" + string(ch), pos: j}
				if strings.IndexByte(spec.shortOptVal, ch) >= 0 {
					val := litArg(l[j+1:])
					o.value, o.attached = &val, true
					p.opts = append(p.opts, o)
					break
				}
				if strings.IndexByte(spec.shortVal, ch) >= 0 {
					if j+1 < len(l) {
						val := litArg(l[j+1:])
						o.value, o.attached = &val, true
					} else if i+1 < len(args) {
						i++
						if args[i].multi {
							return p, fmt.Sprintf("the value %s of %s -%c must be a single word; quote it", args[i].text, name, ch)
						}
						o.value = &args[i]
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, o)
			}
		}
	}
	return p, ""
}

// expandLong resolves a possibly abbreviated long option among names.
func expandLong(n string, names []string) (string, bool) {
	found := ""
	for _, full := range names {
		if full == n {
			return full, true
		}
		if strings.HasPrefix(full, n) {
			if found != "" {
				return "", false // ambiguous: getopt refuses it
			}
			found = full
		}
	}
	return found, found != ""
}

func notLiteral(name string, a arg) string {
	return fmt.Sprintf("argument %s of `%s` is computed and could be an option; write it literally or after --", a.text, name)
}

// requireDashSafe refuses computed words that could be options; used for
// commands whose options are checked by looking at static words only.
func requireDashSafe(name string, args []arg) string {
	for _, a := range args {
		if a.static && a.lit == "--" {
			return ""
		}
		if !a.static && !a.dashSafe() {
			return notLiteral(name, a)
		}
	}
	return ""
}
