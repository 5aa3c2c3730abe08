package command

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Invocation is one parsed slash command.
type Invocation struct {
	Cmd   *Command
	Args  []string          // positional arguments
	Flags map[string]string // flag → value ("true" for switches)
}

// token is one word of a line, with where it starts (a rune column from
// 1) and whether any of it was quoted (a quoted word is never a flag).
type token struct {
	text   string
	col    int
	quoted bool
}

// unterminatedError is a quote left open; col is where it opens.
type unterminatedError struct {
	quote rune
	col   int
}

func (e *unterminatedError) Error() string {
	return fmt.Sprintf("unterminated quote (%c) opened at column %d", e.quote, e.col)
}

// split cuts a line into words, shell-like: '…' keeps everything, "…"
// keeps everything but \" and \\, and a backslash outside quotes keeps
// the next character. The last word of a line that ends inside a quote
// or after a backslash is returned with the error.
func split(line string) ([]token, error) {
	var out []token
	var cur strings.Builder
	in, started, quoted, start := rune(0), false, false, 0
	quoteCol, escaped := 0, false
	col := 0
	flush := func() {
		if started {
			out = append(out, token{text: cur.String(), col: start, quoted: quoted})
		}
		cur.Reset()
		started, quoted = false, false
	}
	begin := func() {
		if !started {
			started, start = true, col
		}
	}
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		col = i + 1
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case in == '\'':
			if r == '\'' {
				in = 0
			} else {
				cur.WriteRune(r)
			}
		case in == '"':
			switch {
			case r == '"':
				in = 0
			case r == '\\' && i+1 < len(runes) && (runes[i+1] == '"' || runes[i+1] == '\\'):
				i++
				cur.WriteRune(runes[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			begin()
			in, quoted, quoteCol = r, true, col
		case r == '\\':
			begin()
			quoted, escaped = true, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			flush()
		default:
			begin()
			cur.WriteRune(r)
		}
	}
	switch {
	case in != 0:
		flush()
		return out, &unterminatedError{quote: in, col: quoteCol}
	case escaped:
		flush()
		return out, fmt.Errorf("a backslash ends the line at column %d", len(runes))
	}
	flush()
	return out, nil
}

// isFlag reports that a word is a flag: unquoted, "--name…".
func (t token) isFlag() bool {
	return !t.quoted && strings.HasPrefix(t.text, "--") && len(t.text) > 2
}

// Parse reads one slash command: "/mode repair --autonomous
// --permission-profile normal". Words are split shell-like; a flag is
// --flag value or --flag=value; "--" ends the flags.
func Parse(line string) (Invocation, error) {
	toks, err := split(line)
	if len(toks) == 0 {
		if err != nil {
			return Invocation{}, err
		}
		return Invocation{}, errors.New("no command: type /help for the commands")
	}
	name := toks[0].text
	c, ok := Lookup(name)
	if !ok {
		return Invocation{}, fmt.Errorf("unknown command /%s (see /help)", strings.TrimPrefix(name, "/"))
	}
	where := "/" + c.Name
	if err != nil {
		return Invocation{}, fmt.Errorf("%s: %v", where, err)
	}
	inv := Invocation{Cmd: c, Flags: map[string]string{}}
	text := c.args == argText || c.args == argRunText
	seen := map[string]bool{}
	rest := toks[1:]
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		if !t.quoted && t.text == "--" {
			for _, a := range rest[i+1:] {
				inv.Args = append(inv.Args, a.text)
			}
			break
		}
		if !t.quoted && !text && len(t.text) > 1 && t.text[0] == '-' && !t.isFlag() {
			return Invocation{}, fmt.Errorf("%s: unknown flag %s (%s)", where, t.text, c.flagList())
		}
		if !t.isFlag() {
			inv.Args = append(inv.Args, t.text)
			continue
		}
		fname, value, hasValue := strings.Cut(t.text[2:], "=")
		f, ok := c.Flag(fname)
		if !ok {
			return Invocation{}, fmt.Errorf("%s: unknown flag --%s (%s)", where, fname, c.flagList())
		}
		if seen[fname] {
			return Invocation{}, fmt.Errorf("%s: --%s is given twice", where, fname)
		}
		seen[fname] = true
		if !f.Value {
			if hasValue {
				switch strings.ToLower(value) {
				case "true":
				case "false":
					continue
				default:
					return Invocation{}, fmt.Errorf("%s: --%s is a switch and takes no value (got %q)", where, fname, value)
				}
			}
			inv.Flags[fname] = "true"
			continue
		}
		if !hasValue {
			if i+1 >= len(rest) || rest[i+1].isFlag() || (!rest[i+1].quoted && rest[i+1].text == "--") {
				return Invocation{}, needsValue(where, f)
			}
			i++
			value = rest[i].text
		}
		v, err := checkValue(where, f, value)
		if err != nil {
			return Invocation{}, err
		}
		inv.Flags[fname] = v
	}
	return inv.checked()
}

// checkValue checks the value of a flag that takes one.
func checkValue(where string, f *Flag, value string) (string, error) {
	if strings.TrimSpace(value) == "" {
		return "", needsValue(where, f)
	}
	if f.Values != nil {
		return pick(where, f.noun, value, f.Values)
	}
	return value, nil
}

// checked runs the checks of the arguments and of the command on a
// whole invocation.
func (inv Invocation) checked() (Invocation, error) {
	if err := inv.checkArgs(); err != nil {
		return Invocation{}, err
	}
	if c := inv.Cmd; c.check != nil {
		if err := c.check(inv); err != nil {
			return Invocation{}, err
		}
	}
	return inv, nil
}

func needsValue(where string, f *Flag) error {
	if f.Values != nil {
		return fmt.Errorf("%s: --%s needs a value (%s)", where, f.Name, strings.Join(f.Values, ", "))
	}
	return fmt.Errorf("%s: --%s needs a value (%s)", where, f.Name, f.Placeholder())
}

// pick checks value against the allowed values, in any case.
func pick(where, noun, value string, allowed []string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(value))
	if slices.Contains(allowed, v) {
		return v, nil
	}
	return "", fmt.Errorf("%s: %q is not a %s (%s)", where, value, noun, strings.Join(allowed, ", "))
}

// checkArgs checks the number and values of the positional arguments,
// normalising values checked against a list.
func (inv *Invocation) checkArgs() error {
	c := inv.Cmd
	where := "/" + c.Name
	n := len(inv.Args)
	lo, hi := 0, 0
	switch c.args {
	case argRun, argAction, argLocal:
		hi = 1
	case argAxis, argPlain:
		lo, hi = 1, 1
	case argText:
		lo, hi = 1, -1
	case argRunText:
		hi = -1
	}
	if n < lo {
		if len(c.ArgValues) > 0 {
			return fmt.Errorf("%s: give a %s (%s)", where, c.argNoun, strings.Join(c.ArgValues, ", "))
		}
		return fmt.Errorf("%s: give the %s (usage: %s)", where, c.argNoun, c.Synopsis())
	}
	if hi >= 0 && n > hi {
		return fmt.Errorf("%s: unexpected argument %q (usage: %s)", where, inv.Args[hi], c.Synopsis())
	}
	if c.args == argText && strings.TrimSpace(strings.Join(inv.Args, " ")) == "" {
		return fmt.Errorf("%s: give the %s (usage: %s)", where, c.argNoun, c.Synopsis())
	}
	if n > 0 && len(c.ArgValues) > 0 {
		v, err := pick(where, c.argNoun, inv.Args[0], c.ArgValues)
		if err != nil {
			return err
		}
		inv.Args[0] = v
	}
	if n > 0 && (c.args == argRun || c.args == argPlain || (c.args == argRunText && inv.Flags["run"] == "" && LooksLikeRun(inv.Args[0]))) {
		if err := checkRunID(where, inv.Args[0]); err != nil {
			return err
		}
	}
	if id, ok := inv.Flags["run"]; ok {
		if err := checkRunID(where, id); err != nil {
			return err
		}
	}
	return nil
}

// checkRunID refuses what cannot be a run id or prefix: the CLI would
// read it as a flag, or it is empty.
func checkRunID(where, id string) error {
	if strings.TrimSpace(id) == "" || strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t\n") {
		return fmt.Errorf("%s: %q is not a run id", where, id)
	}
	return nil
}
