package goal

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file reads the shell text of checks (run, start, tmux keys) without
// running it, to tell whether a check can fail at all.

// parseShell parses src as bash.
func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// unknownText stands for the value of an expansion: no pattern a planner
// writes matches it.
const unknownText = "\x00"

// wordText is what word w expands to, with unknownText for every part
// that is not static; static reports whether there was no such part.
func wordText(w *syntax.Word) (text string, static bool) {
	var b strings.Builder
	static = true
	var parts func([]syntax.WordPart)
	parts = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch x := p.(type) {
			case *syntax.Lit:
				b.WriteString(x.Value)
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				parts(x.Parts)
			default:
				b.WriteString(unknownText)
				static = false
			}
		}
	}
	parts(w.Parts)
	return b.String(), static
}

// callName is the static name of the program a simple command runs, or "".
func callName(c *syntax.CallExpr) string {
	if len(c.Args) == 0 {
		return ""
	}
	name, ok := wordText(c.Args[0])
	if !ok {
		return ""
	}
	return name
}

// callArgs are the static texts of a simple command's arguments (after
// the name).
func callArgs(c *syntax.CallExpr) []string {
	var out []string
	for _, w := range c.Args[1:] {
		t, _ := wordText(w)
		out = append(out, t)
	}
	return out
}

// printers are commands that only write the text they are given.
var printers = []string{"echo", "printf"}

// settersAndWaits are commands that exercise nothing: they set shell
// state, wait, or end the shell.
var settersAndWaits = []string{"true", ":", "false", "sleep", "cd", "export", "set", "unset", "shopt", "umask", "exit", "return", "wait"}

// inert reports that simple command c exercises nothing: it prints fixed
// text (echo, printf, cat of a here-document), sets shell state, waits
// or exits. Commands inside its words' substitutions are judged
// separately.
func inert(c *syntax.CallExpr, redirs []*syntax.Redirect) bool {
	if len(c.Args) == 0 {
		return true // assignments only
	}
	name := callName(c)
	switch {
	case slices.Contains(printers, name), slices.Contains(settersAndWaits, name):
		return true
	case name == "cat":
		return catOfInput(c, redirs)
	}
	return false
}

// catOfInput reports that a cat command reads no file: it copies its
// input (a here-document, or nothing).
func catOfInput(c *syntax.CallExpr, redirs []*syntax.Redirect) bool {
	for _, a := range callArgs(c) {
		if !strings.HasPrefix(a, "-") || a == "-" {
			return false
		}
	}
	for _, r := range redirs {
		if r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut {
			return false // cat <file
		}
	}
	return true
}

// helpFlags are flags that make a program describe itself instead of
// doing its work.
var helpFlags = []string{"--help", "--version", "--dry-run"}

// filters are programs that only transform the output of others.
var filters = []string{"grep", "egrep", "fgrep", "head", "tail", "wc", "sort", "uniq", "tr", "cut", "tee", "sed", "awk", "jq", "cat", "test", "["}

// script is what Trivial needs to know about one piece of shell.
type script struct {
	file *syntax.File
	// real are the simple commands that exercise something (everything
	// but inert ones), in order, including those in substitutions.
	real []*syntax.CallExpr
	// opaque: constructs whose effect is not judged ([[ ]], (( )), let,
	// functions) are present.
	opaque bool
	// errexit and pipefail: set -e / set -o pipefail appear.
	errexit, pipefail bool
}

// readScript parses src and sorts its commands; ok is false when src is
// not valid shell.
func readScript(src string) (script, bool) {
	f, err := parseShell(src)
	if err != nil {
		return script{}, false
	}
	s := script{file: f}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if call, ok := x.Cmd.(*syntax.CallExpr); ok {
				if !inert(call, x.Redirs) {
					s.real = append(s.real, call)
				}
				if callName(call) == "set" {
					s.readSet(callArgs(call))
				}
			}
		case *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause, *syntax.FuncDecl, *syntax.CoprocClause:
			s.opaque = true
		}
		return true
	})
	return s, true
}

// readSet notes the options a set command turns on.
func (s *script) readSet(args []string) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			continue
		}
		if strings.Contains(a, "e") {
			s.errexit = true
		}
		if strings.Contains(a, "o") && i+1 < len(args) {
			switch args[i+1] {
			case "pipefail":
				s.pipefail = true
			case "errexit":
				s.errexit = true
			}
		}
	}
}

// onlyInert reports that the script exercises nothing.
func (s script) onlyInert() bool { return len(s.real) == 0 && !s.opaque }

// onlyHelp returns the help flag every exercising command of the script
// carries (ignoring filters of their output), or "".
func (s script) onlyHelp() string {
	flag := ""
	for _, c := range s.real {
		if slices.Contains(filters, callName(c)) {
			continue
		}
		i := slices.IndexFunc(callArgs(c), func(a string) bool { return slices.Contains(helpFlags, a) })
		if i < 0 {
			return ""
		}
		flag = callArgs(c)[i]
	}
	return flag
}

// alwaysZero reports that the script exits 0 whatever its commands do.
func (s script) alwaysZero() bool { return s.listZero(s.file.Stmts) }

// listZero reports that a list of statements always ends with status 0.
func (s script) listZero(stmts []*syntax.Stmt) bool {
	for i, st := range stmts {
		if code, ok := exitCode(st); ok {
			// an unconditional exit ends the list here
			return code == "0" && (!s.errexit || s.allZero(stmts[:i]))
		}
	}
	if len(stmts) == 0 {
		return true
	}
	if s.errexit && !s.allZero(stmts[:len(stmts)-1]) {
		return false // set -e: a failing command ends the script first
	}
	return s.stmtZero(stmts[len(stmts)-1])
}

func (s script) allZero(stmts []*syntax.Stmt) bool {
	for _, st := range stmts {
		if !s.stmtZero(st) {
			return false
		}
	}
	return true
}

// exitCode returns the literal argument of an exit statement ("" for a
// bare exit).
func exitCode(st *syntax.Stmt) (string, bool) {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || callName(c) != "exit" || st.Negated || st.Background {
		return "", false
	}
	args := callArgs(c)
	if len(args) == 0 {
		return "", false // a bare exit keeps the last status
	}
	return args[0], true
}

// cannotFail are commands whose status is 0.
var cannotFail = []string{"true", ":", "echo", "printf", "sleep", "export", "unset", "set", "shopt"}

// stmtZero reports that a statement's status is always 0.
func (s script) stmtZero(st *syntax.Stmt) bool {
	if st.Background {
		return true
	}
	if st.Negated {
		return false
	}
	switch x := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(x.Args) == 0 {
			return !hasSubst(x)
		}
		name := callName(x)
		if name == "exit" {
			args := callArgs(x)
			return len(args) > 0 && args[0] == "0"
		}
		return slices.Contains(cannotFail, name) || (name == "cat" && catOfInput(x, st.Redirs))
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.AndStmt:
			return s.stmtZero(x.X) && s.stmtZero(x.Y)
		case syntax.OrStmt:
			return s.stmtZero(x.X) || s.stmtZero(x.Y)
		default: // pipes: the last command's status, unless pipefail
			return s.stmtZero(x.Y) && (!s.pipefail || s.stmtZero(x.X))
		}
	case *syntax.Block:
		return s.listZero(x.Stmts)
	case *syntax.Subshell:
		return s.listZero(x.Stmts)
	case *syntax.IfClause:
		for c := x; c != nil; c = c.Else {
			if !s.listZero(c.Then) {
				return false
			}
		}
		return true
	case *syntax.DeclClause:
		return true
	}
	return false
}

// hasSubst reports that an assignment-only command runs a substitution
// (whose status becomes its own).
func hasSubst(c *syntax.CallExpr) bool {
	found := false
	syntax.Walk(c, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// printed lists the texts the script writes itself with echo, printf or
// cat of a here-document to its output (not into a pipe or a file),
// expansions replaced by unknownText.
func (s script) printed() []string {
	var out []string
	var list func([]*syntax.Stmt, bool)
	var stmt func(*syntax.Stmt, bool)
	list = func(stmts []*syntax.Stmt, toFile bool) {
		for _, st := range stmts {
			stmt(st, toFile)
		}
	}
	stmt = func(st *syntax.Stmt, toFile bool) {
		toFile = toFile || redirectsToFile(st.Redirs)
		switch x := st.Cmd.(type) {
		case *syntax.CallExpr:
			if toFile || len(x.Args) == 0 {
				return
			}
			if t, ok := printedBy(x, st.Redirs); ok {
				out = append(out, t)
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.AndStmt || x.Op == syntax.OrStmt {
				stmt(x.X, toFile)
			}
			stmt(x.Y, toFile) // of a pipe, only the last command writes out
		case *syntax.Block:
			list(x.Stmts, toFile)
		case *syntax.Subshell:
			list(x.Stmts, toFile)
		case *syntax.IfClause:
			for c := x; c != nil; c = c.Else {
				list(c.Cond, toFile)
				list(c.Then, toFile)
			}
		case *syntax.WhileClause:
			list(x.Do, toFile)
		case *syntax.ForClause:
			list(x.Do, toFile)
		case *syntax.CaseClause:
			for _, it := range x.Items {
				list(it.Stmts, toFile)
			}
		}
	}
	list(s.file.Stmts, false)
	return out
}

// printedBy is the text a printer command writes, if c is one.
func printedBy(c *syntax.CallExpr, redirs []*syntax.Redirect) (string, bool) {
	name := callName(c)
	var words []string
	for _, w := range c.Args[1:] {
		t, _ := wordText(w)
		words = append(words, t)
	}
	switch name {
	case "echo":
		for len(words) > 0 && (words[0] == "-n" || words[0] == "-e" || words[0] == "-E" || words[0] == "-ne" || words[0] == "-en") {
			words = words[1:]
		}
		return strings.Join(words, " "), true
	case "printf":
		return unescape(strings.Join(words, " ")), true
	case "cat":
		if !catOfInput(c, redirs) {
			return "", false
		}
		var docs []string
		for _, r := range redirs {
			switch {
			case (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil:
				t, _ := wordText(r.Hdoc)
				docs = append(docs, strings.TrimSuffix(t, "\n"))
			case r.Op == syntax.WordHdoc && r.Word != nil:
				t, _ := wordText(r.Word)
				docs = append(docs, t)
			}
		}
		return strings.Join(docs, "\n"), len(docs) > 0
	}
	return "", false
}

// unescape turns printf's \n and \t into the characters.
func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(s)
}

// redirectsToFile reports that output is sent to a file rather than
// standard output or standard error.
func redirectsToFile(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if r.Word == nil {
				return true
			}
			t, _ := wordText(r.Word)
			if t != "/dev/stdout" && t != "/dev/stderr" {
				return true
			}
		}
	}
	return false
}

// tmuxKeyNames are send-keys names of keys that type no text.
var tmuxKeyNames = []string{
	"Escape", "Tab", "BTab", "BSpace", "Up", "Down", "Left", "Right", "Home", "End",
	"IC", "DC", "Insert", "Delete", "PageUp", "PageDown", "PgUp", "PgDn", "PPage", "NPage",
}

// typedText is the text tmux send-keys types for keys: literal words as
// they are, Enter as a newline, Space as a space, other key names (C-c,
// Escape, F1 …) as nothing.
func typedText(keys string) string {
	var words []string
	if f, err := parseShell(keys); err == nil && len(f.Stmts) == 1 {
		if c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(f.Stmts[0].Redirs) == 0 {
			for _, w := range c.Args {
				t, _ := wordText(w)
				words = append(words, t)
			}
		}
	}
	if words == nil {
		words = strings.Fields(keys)
	}
	var b strings.Builder
	for _, w := range words {
		switch {
		case w == "Enter" || w == "KPEnter" || w == "C-m" || w == "C-j":
			b.WriteString("\n")
		case w == "Space":
			b.WriteString(" ")
		case slices.Contains(tmuxKeyNames, w), isModifiedKey(w), isFunctionKey(w):
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") && !strings.HasSuffix(b.String(), " ") {
				b.WriteString(" ")
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// TmuxKey reports that a word of a tmux step's keys names a key (Enter,
// Space, Escape, C-c, F1 …) rather than text to type.
func TmuxKey(w string) bool {
	return w == "Enter" || w == "KPEnter" || w == "Space" || slices.Contains(tmuxKeyNames, w) || isModifiedKey(w) || isFunctionKey(w)
}

// isModifiedKey reports a key with a modifier: C-c, M-x, S-Up, ^C.
func isModifiedKey(w string) bool {
	for _, p := range []string{"C-", "M-", "S-"} {
		if strings.HasPrefix(w, p) && len(w) > len(p) {
			return true
		}
	}
	return len(w) == 2 && w[0] == '^'
}

// isFunctionKey reports F1 to F20.
func isFunctionKey(w string) bool {
	if len(w) < 2 || len(w) > 3 || w[0] != 'F' {
		return false
	}
	for _, r := range w[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// readers are programs that read files or text and run nothing of the
// project's: a check made only of them shows what the code says, not what
// it does.
var readers = []string{
	"grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "tac", "head", "tail", "wc", "diff", "cmp", "comm",
	"test", "[", "ls", "find", "stat", "file", "du", "sed", "awk", "gawk", "mawk", "sort", "uniq", "cut", "tr",
	"nl", "od", "xxd", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "base64",
	"jq", "yq", "basename", "dirname", "realpath", "readlink", "tree", "column", "paste", "fold", "rev",
	"expand", "unexpand", "true", "false", "echo", "printf", "gofmt",
}

// goReaders are the go command's subcommands that compile or read code
// without running it.
var goReaders = []string{"vet", "list", "build", "fmt", "doc", "version", "env", "mod"}

// ReadsOnly reports that check c of channel ch only reads the project's
// source: a command whose every program is a reader (grep, cat, test, wc,
// a go build or vet …) and that reads at least one file or directory that
// is not documentation. It shows what the code says, not what it does. A
// check that reads only documentation (README, *.md, docs/) shows a
// change of the documentation; checks of the other channels start a
// program.
func ReadsOnly(ch Channel, c Check) bool {
	if ch != ChannelCommand {
		return false
	}
	s, ok := readScript(c.Run)
	if !ok || len(s.real) == 0 {
		return ok
	}
	docsOnly := true
	for _, call := range s.real {
		name := callName(call)
		args := callArgs(call)
		if name == "go" {
			if len(args) > 0 && slices.Contains(goReaders, args[0]) {
				docsOnly = false
				continue
			}
			return false
		}
		if !slices.Contains(readers, path.Base(name)) {
			return false
		}
		pattern := slices.Contains([]string{"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "jq", "yq"}, path.Base(name))
		for _, a := range args {
			switch {
			case strings.HasPrefix(a, "-"):
			case pattern:
				pattern = false // grep's pattern, sed's or awk's program
			case !docPath(a):
				docsOnly = false
			}
		}
	}
	return !docsOnly
}

// docPath reports that p is documentation: README, CHANGELOG and the
// like, text and markup files, or anything under docs/ or doc/.
func docPath(p string) bool {
	p = strings.TrimPrefix(path.Clean(p), "./")
	if strings.HasPrefix(p, "docs/") || strings.HasPrefix(p, "doc/") {
		return true
	}
	base := strings.ToUpper(path.Base(p))
	for _, n := range []string{"README", "CHANGELOG", "CHANGES", "LICENSE", "NOTICE", "CONTRIBUTING", "AUTHORS", "NEWS"} {
		if strings.HasPrefix(base, n) {
			return true
		}
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc":
		return true
	}
	return false
}
