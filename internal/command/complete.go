package command

import (
	"sort"
	"strings"
)

// Complete lists the slash commands that start with prefix ("/mo" →
// "/mode", "/model", "/model-mode"), sorted.
func Complete(prefix string) []string {
	p := strings.TrimPrefix(prefix, "/")
	var out []string
	for i := range Table {
		if strings.HasPrefix(Table[i].Name, p) {
			out = append(out, "/"+Table[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// CompleteLine lists the lines the last word of line may complete to: a
// command name, a flag ("/mode repair --per" → "/mode repair
// --permission-profile"), a flag's value ("/steer --scope n" → "/steer
// --scope now") or a positional value ("/control a" → "/control
// assisted", "/control autonomous"). Each is the whole line; none when
// nothing fits.
func CompleteLine(line string) []string {
	toks, err := split(line)
	if err != nil {
		return nil // inside a quote or after a backslash: free text
	}
	runes := []rune(line)
	endsInSpace := len(runes) > 0 && strings.ContainsRune(" \t\n\r", runes[len(runes)-1])
	if len(toks) == 0 || (len(toks) == 1 && !endsInSpace) {
		if strings.TrimSpace(line) == "" {
			return Complete("/")
		}
		lead := string(runes[:toks[0].col-1])
		var out []string
		for _, s := range Complete(toks[0].text) {
			if strings.HasPrefix(toks[0].text, "/") {
				out = append(out, lead+s)
			} else {
				out = append(out, lead+strings.TrimPrefix(s, "/"))
			}
		}
		return out
	}
	c, ok := Lookup(toks[0].text)
	if !ok {
		return nil
	}
	words := toks[1:]
	cur := token{col: len(runes) + 1}
	if !endsInSpace {
		cur, words = words[len(words)-1], words[:len(words)-1]
		if cur.quoted {
			return nil
		}
	}
	head := string(runes[:cur.col-1])
	// What the words before this one are: given flags, positionals, and
	// whether the last one waits for a value.
	given := map[string]bool{}
	positionals, afterDash := 0, false
	var waiting *Flag
	for _, t := range words {
		switch {
		case waiting != nil:
			waiting = nil
		case afterDash:
			positionals++
		case !t.quoted && t.text == "--":
			afterDash = true
		case t.isFlag():
			name, _, hasValue := strings.Cut(t.text[2:], "=")
			given[name] = true
			if f, ok := c.Flag(name); ok && f.Value && !hasValue {
				waiting = f
			}
		default:
			positionals++
		}
	}
	var out []string
	values := func(prefix string, allowed []string) {
		for _, v := range allowed {
			if strings.HasPrefix(v, strings.ToLower(cur.text[len(prefix):])) {
				out = append(out, head+prefix+v)
			}
		}
	}
	switch {
	case waiting != nil:
		values("", waiting.Values)
	case afterDash:
	case strings.HasPrefix(cur.text, "--") && strings.Contains(cur.text, "="):
		name, _, _ := strings.Cut(cur.text[2:], "=")
		if f, ok := c.Flag(name); ok {
			values("--"+name+"=", f.Values)
		}
	case strings.HasPrefix(cur.text, "-") || (cur.text == "" && (positionals > 0 || len(c.ArgValues) == 0)):
		for _, f := range c.Flags {
			if !given[f.Name] && strings.HasPrefix("--"+f.Name, cur.text) {
				out = append(out, head+"--"+f.Name)
			}
		}
	case positionals == 0:
		values("", c.ArgValues)
	}
	return out
}
