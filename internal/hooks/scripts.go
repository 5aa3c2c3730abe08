package hooks

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/ultra-dev/ultra/internal/policy"
)

// A script is a file of the project that a hook's command runs or reads
// by a path relative to its working directory: the program of a simple
// command (./check.sh, scripts/lint.sh), the script an interpreter is
// given (python3 .claude/hooks/guard.py, node hooks/fmt.js, . env.sh),
// and any path below .claude/. Start and End are the word's bytes in
// the command, quotes included.
type script struct {
	Start, End int
	Path       string // relative, cleaned
}

// interpreters run the first argument that is not an option as a script.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"python": true, "python3": true, "python2": true, "node": true, "nodejs": true,
	"deno": true, "bun": true, "ruby": true, "perl": true, "php": true,
	"tsx": true, "ts-node": true, "uv": true, "source": true, ".": true,
}

// inline are an interpreter's options after which no script follows
// (the program is the option's value, or a module).
func inline(interpreter, option string) bool {
	switch interpreter {
	case "sh", "bash", "zsh", "dash", "ksh", "fish":
		return option == "-c"
	case "python", "python3", "python2":
		return option == "-c" || option == "-m"
	case "php":
		return option == "-r"
	}
	return option == "-e" || option == "--eval" || option == "-p" || option == "--print"
}

// keywords are the shell's words a command may follow in its place
// (if python3 check.py; then …).
var keywords = map[string]bool{"if": true, "then": true, "elif": true, "else": true, "do": true, "while": true, "until": true,
	"!": true, "{": true, "exec": true, "time": true}

// takesValue says option of interpreter (its name) takes the next word
// as its value (python3 -X utf8, node -r dotenv/config, bash -o pipefail).
func takesValue(interpreter, option string) bool {
	var opts []string
	switch strings.TrimRight(interpreter, "0123456789.") {
	case "python":
		opts = []string{"-W", "-X"}
	case "node", "nodejs":
		opts = []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "--conditions", "-C", "--input-type"}
	case "sh", "bash", "zsh", "dash", "ksh":
		opts = []string{"-o", "+o", "-O", "+O"}
	case "ruby":
		opts = []string{"-I", "-r", "-E"}
	case "perl":
		opts = []string{"-I", "-M", "-m"}
	case "php":
		opts = []string{"-c", "-d"}
	case "uv":
		opts = []string{"--with", "--with-requirements", "--with-editable", "--python", "-p", "--from", "--project", "--directory", "--index", "--extra", "--group"}
	case "bun":
		opts = []string{"--preload", "-r", "--cwd", "--config", "-c"}
	case "deno":
		opts = []string{"--config", "--import-map", "--env-file"}
	case "tsx", "ts-node":
		opts = []string{"--tsconfig", "-r", "--require", "-P", "--project", "--import"}
	}
	return slices.Contains(opts, option)
}

// Scripts are the project files command runs or reads by relative path
// (see script), in the order they appear. Words with expansions ($VAR,
// `…`, globs) are left alone: they name no file ultra can know.
func Scripts(command string) []string {
	var out []string
	for _, s := range scripts(command) {
		out = append(out, s.Path)
	}
	return out
}

// Rebase is command with every script path (see Scripts) made absolute
// below dir, shell-quoted: the hook runs the person's copy of its
// scripts, whatever its working directory holds.
func Rebase(command, dir string) string {
	ss := scripts(command)
	sort.Slice(ss, func(i, j int) bool { return ss[i].Start > ss[j].Start })
	for _, s := range ss {
		command = command[:s.Start] + quote(path.Join(dir, s.Path)) + command[s.End:]
	}
	return command
}

// quote is s as one shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// word is one shell word of a command: its text unquoted, where it lies,
// whether it could be read (no expansion in it), and whether an operator
// (; | & ( ) newline) came before it.
type word struct {
	text       string
	start, end int
	plain      bool
	first      bool
}

func scripts(command string) []script {
	var out []script
	seen := map[int]bool{}
	add := func(w word) {
		p, ok := relative(w)
		if ok && !seen[w.start] {
			seen[w.start] = true
			out = append(out, script{Start: w.start, End: w.end, Path: p})
		}
	}
	ws := words(command)
	for i := 0; i < len(ws); i++ {
		if !ws[i].first {
			if p, ok := relative(ws[i]); ok && (p == ".claude" || strings.HasPrefix(p, ".claude/")) {
				add(ws[i])
			}
			continue
		}
		// A simple command: assignments and keywords, then its program,
		// or what the wrappers it starts with run (timeout 20 python3
		// x.py, sudo -u a sh x.sh: policy.Unwrap reads them).
		j := i
		for j < len(ws) && (isAssignment(ws[j].text) || keywords[ws[j].text]) {
			j++
		}
		if j >= len(ws) || (j > i && ws[j].first) {
			continue
		}
		end := j + 1
		for end < len(ws) && !ws[end].first {
			end++
		}
		texts := make([]string, end-j)
		for k := range texts {
			texts[k] = ws[j+k].text
		}
		skip := 0
		for _, c := range policy.Unwrap(texts) {
			if n := len(texts) - len(c); len(c) > 0 && n > skip && &c[0] == &texts[n] {
				skip = n // the innermost command that ends the words
			}
		}
		j += skip
		prog := ws[j]
		if strings.Contains(prog.text, "/") {
			add(prog)
		}
		if !interpreters[path.Base(prog.text)] {
			continue
		}
		for k := j + 1; k < len(ws) && !ws[k].first; k++ {
			t := ws[k].text
			if k == j+1 && t == "run" && (prog.text == "deno" || prog.text == "bun" || prog.text == "uv") {
				continue
			}
			if inline(path.Base(prog.text), t) {
				break
			}
			if takesValue(path.Base(prog.text), t) {
				k++ // the option's value is no script
				continue
			}
			if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") {
				continue
			}
			add(ws[k])
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// relative is the cleaned relative path w names, when it names one the
// project holds: plain, not absolute, not below the home, not leaving
// the project.
func relative(w word) (string, bool) {
	t := w.text
	if !w.plain || t == "" || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || strings.HasPrefix(t, "-") || strings.ContainsAny(t, "*?[]{}=:") {
		return "", false
	}
	p := path.Clean(t)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

func isAssignment(t string) bool {
	k, _, ok := strings.Cut(t, "=")
	if !ok || k == "" {
		return false
	}
	for i, c := range k {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// words splits command as a shell would into words, marking those that
// begin a simple command. Quotes are removed; a word with an expansion
// ($, `, a backslash outside single quotes) is not plain.
func words(command string) []word {
	var out []word
	first := true
	i := 0
	for i < len(command) {
		c := command[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')':
			first = true
			i++
			continue
		case c == '<' || c == '>':
			// A redirection's target is no command's word.
			i++
			for i < len(command) && (command[i] == '>' || command[i] == '&' || command[i] == '|') {
				i++
			}
			for i < len(command) && (command[i] == ' ' || command[i] == '\t') {
				i++
			}
			w := scan(command, i)
			i = w.end
			continue
		case c == '#' && first:
			for i < len(command) && command[i] != '\n' {
				i++
			}
			continue
		}
		w := scan(command, i)
		w.first = first
		first = false
		out = append(out, w)
		i = w.end
	}
	return out
}

// scan reads one word from command[i:].
func scan(command string, i int) word {
	w := word{start: i, plain: true}
	var b strings.Builder
	for i < len(command) {
		c := command[i]
		if strings.IndexByte(" \t\n;|&()<>", c) >= 0 {
			break
		}
		switch c {
		case '\'', '"':
			j := strings.IndexByte(command[i+1:], c)
			if j < 0 {
				w.plain = false
				i = len(command)
				continue
			}
			in := command[i+1 : i+1+j]
			if c == '"' && strings.ContainsAny(in, "$`\\") {
				w.plain = false
			}
			b.WriteString(in)
			i += j + 2
			continue
		case '$', '`', '\\':
			w.plain = false
		}
		b.WriteByte(c)
		i++
	}
	w.text, w.end = b.String(), i
	return w
}

// Scripts are the script paths (see the function Scripts) of every
// configured hook's command.
func (c Config) Scripts() []string {
	var out []string
	for _, gs := range c.Events {
		for _, g := range gs {
			for _, h := range g.Hooks {
				out = append(out, Scripts(h.Command)...)
			}
		}
	}
	return out
}

// PythonInline says command runs Python on a module or on code given in
// it (python3 -m guard, python3 -c '…'): Python then looks for modules in
// its working directory first, which for a hook is the run's tree. (A
// script's own folder, which Python searches for a script, is the
// project view's.)
func PythonInline(command string) bool {
	ws := words(command)
	for i, w := range ws {
		if strings.TrimRight(path.Base(w.text), "0123456789.") != "python" {
			continue
		}
		for k := i + 1; k < len(ws) && !ws[k].first; k++ {
			if t := ws[k].text; t == "-m" || t == "-c" || strings.HasPrefix(t, "-c") || strings.HasPrefix(t, "-m") {
				return true
			} else if !strings.HasPrefix(t, "-") {
				break
			}
		}
	}
	return false
}
