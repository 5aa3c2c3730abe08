package policy

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Verdict is the classifier's judgement of one command line.
type Verdict struct {
	ReadOnly bool
	// Reason says, when the command is not read-only, what was refused, in
	// words a model can act on.
	Reason string
}

// maxDepth bounds nested shells (bash -c "bash -c ...").
const maxDepth = 4

// ClassifyShell decides whether the bash command line is provably
// read-only: every simple command it runs, including those in pipelines,
// lists, compound commands and command or process substitutions, is a
// known read-only program used in a read-only way, nothing is redirected
// into a file, nothing is put in the background, and nothing can make bash
// evaluate text as code. Anything it cannot prove is refused.
func ClassifyShell(command string) Verdict {
	return classify(command, 0, nil)
}

func classify(src string, depth int, inherited map[string]bool) Verdict {
	f, err := parse(src)
	if err != nil {
		return Verdict{Reason: "could not parse: " + err.Error()}
	}
	c := newClassifier(src, f, depth, inherited)
	c.check(f)
	if c.reason != "" {
		return Verdict{Reason: c.reason}
	}
	return Verdict{ReadOnly: true}
}

func parse(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// classifier judges one parsed command line.
type classifier struct {
	src     string
	depth   int
	tainted map[string]bool // variables the command line itself sets
	reason  string          // the first refusal
}

func newClassifier(src string, f *syntax.File, depth int, inherited map[string]bool) *classifier {
	c := &classifier{src: src, depth: depth, tainted: map[string]bool{}}
	for name := range inherited {
		c.tainted[name] = true
	}
	c.collectTaint(f)
	return c
}

func (c *classifier) refuse(format string, args ...any) {
	if c.reason == "" {
		c.reason = fmt.Sprintf(format, args...)
	}
}

// text is the source text of node n.
func (c *classifier) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(c.src) || start > end {
		return "?"
	}
	return c.src[start:end]
}

// check walks the whole tree and records the first refusal.
func (c *classifier) check(root syntax.Node) {
	syntax.Walk(root, func(n syntax.Node) bool {
		if c.reason != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			c.stmt(n)
		case *syntax.Redirect:
			c.redirect(n)
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				args := make([]arg, len(n.Args))
				for i, w := range n.Args {
					args[i] = c.analyse(w)
				}
				if r := c.checkArgs(args); r != "" {
					c.refuse("%s", r)
				}
			}
		case *syntax.Assign:
			c.assign(n)
		case *syntax.FuncDecl:
			c.refuse("function definitions are not allowed")
		case *syntax.DeclClause:
			c.refuse("`%s` changes shell state", n.Variant.Value)
		case *syntax.CoprocClause:
			c.refuse("coproc starts a background process")
		case *syntax.TestDecl:
			c.refuse("@test declarations are not allowed")
		case *syntax.ArithmExp:
			c.arith(n.X)
		case *syntax.ArithmCmd:
			c.arith(n.X)
		case *syntax.LetClause:
			for _, e := range n.Exprs {
				c.arith(e)
			}
		case *syntax.CStyleLoop:
			c.arith(n.Init)
			c.arith(n.Cond)
			c.arith(n.Post)
		case *syntax.ArrayElem:
			c.arith(n.Index)
		case *syntax.ParamExp:
			c.paramExp(n)
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				if w, ok := n.X.(*syntax.Word); !ok || !safeVarRef(c.analyse(w)) {
					c.refuse("%s with a computed or subscripted name can run commands", n.Op)
				}
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				c.arith(n.X)
				c.arith(n.Y)
			}
		}
		return c.reason == ""
	})
}

func (c *classifier) stmt(s *syntax.Stmt) {
	switch {
	case s.Background:
		c.refuse("running a command in the background (&) is not allowed")
	case s.Coprocess, s.Disown:
		c.refuse("background processes are not allowed")
	}
}

// redirect allows reading, here-documents, duplicating descriptors and
// writing to /dev/null; every other redirection may write a file.
func (c *classifier) redirect(r *syntax.Redirect) {
	if r.N != nil && !isInt(r.N.Value) {
		c.refuse("redirection with a variable file descriptor (%s) is not allowed", c.text(r))
		return
	}
	target := c.analyse(r.Word)
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	case syntax.DplIn, syntax.DplOut:
		if target.static && (isInt(target.lit) || target.lit == "-" || r.Op == syntax.DplOut && harmlessDevice(target.lit)) {
			return
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
		if target.static && harmlessDevice(target.lit) {
			return
		}
	}
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	c.refuse("redirection to a file (%s %s)", op, target.text)
}

func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

func (c *classifier) assign(a *syntax.Assign) {
	if a.Name != nil {
		if why := dangerousVar(a.Name.Value); why != "" {
			c.refuse("%s", why)
			return
		}
	}
	c.arith(a.Index)
}

// dangerousVar explains why assigning name could change which programs
// run or make them run code; "" when it cannot.
func dangerousVar(name string) string {
	switch name {
	case "PATH", "ENV", "HOME", "SHELLOPTS", "BASHOPTS", "PS0", "PS1", "PS2", "PS3", "PS4",
		"PROMPT_COMMAND", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "GNUPGHOME",
		"RIPGREP_CONFIG_PATH", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES",
		"GLIBC_TUNABLES", "CC", "CXX", "PKG_CONFIG":
		return fmt.Sprintf("assigning %s can change which programs run", name)
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "GO", "CGO_", "BASH_", "XDG_", "AWK", "LESS", "PYTHON", "PERL", "RUBY", "NODE_"} {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("assigning %s can change which programs run", name)
		}
	}
	return ""
}

func (c *classifier) paramExp(p *syntax.ParamExp) {
	if p.Excl {
		c.refuse("indirect expansion (%s) is not allowed", c.text(p))
		return
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.OtherParamOps:
			if p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
				c.refuse("prompt expansion (%s) can run commands", c.text(p))
				return
			}
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if p.Param != nil {
				if why := dangerousVar(p.Param.Value); why != "" {
					c.refuse("%s", why)
					return
				}
			}
		}
	}
	c.arith(p.Index)
	if p.Slice != nil {
		c.arith(p.Slice.Offset)
		c.arith(p.Slice.Length)
	}
}

// arith checks an arithmetic context. Bash evaluates the value of every
// variable named there as arithmetic again, and array subscripts inside
// that value may contain command substitutions, so a variable the command
// line set to a string could run code. Only literals and variables the
// line does not set (or sets to integers) are allowed.
func (c *classifier) arith(n syntax.Node) {
	if n == nil || isNilNode(n) {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if c.reason != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			c.refuse("command output used in arithmetic (%s) can run commands", c.text(n))
		case *syntax.Lit:
			c.arithText(n.Value, false)
		case *syntax.SglQuoted:
			c.arithText(n.Value, true)
		case *syntax.DblQuoted:
			for _, p := range n.Parts {
				if l, ok := p.(*syntax.Lit); ok {
					c.arithText(l.Value, true)
				}
			}
		case *syntax.ParamExp:
			if n.Param != nil && c.isTainted(n.Param.Value) {
				c.refuse("arithmetic on $%s, which this command sets, can run commands", n.Param.Value)
			}
		}
		return c.reason == ""
	})
}

// isNilNode catches typed nil interface values (a nil *Word as an
// ArithmExpr).
func isNilNode(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Word:
		return n == nil
	case *syntax.BinaryArithm:
		return n == nil
	case *syntax.UnaryArithm:
		return n == nil
	case *syntax.ParenArithm:
		return n == nil
	}
	return false
}

func (c *classifier) arithText(s string, quoted bool) {
	if quoted && strings.ContainsAny(s, "$`[\\'\"") {
		c.refuse("quoted text in arithmetic (%q) is evaluated again and can run commands", s)
		return
	}
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch >= '0' && ch <= '9':
			for i < len(s) && (isWordByte(s[i]) || s[i] == '#' || s[i] == '@') {
				i++
			}
		case isWordByte(ch):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			if c.isTainted(s[i:j]) {
				c.refuse("arithmetic on %s, which this command sets, can run commands", s[i:j])
				return
			}
			i = j
		default:
			i++
		}
	}
}

func isWordByte(ch byte) bool {
	return ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
}

// safeVarRef reports that a -v operand is a plain name or a name with a
// numeric subscript, which bash can check without evaluating anything.
func safeVarRef(a arg) bool {
	if !a.static {
		return false
	}
	name, sub, ok := strings.Cut(a.lit, "[")
	if !ok {
		return isIdent(name)
	}
	return isIdent(name) && strings.HasSuffix(sub, "]") && isInt(strings.TrimSuffix(sub, "]"))
}

// isTainted reports whether variable name may hold text the command line
// chose or read: variables it sets to non-integers, loop variables,
// positional parameters and bash variables filled from input.
func (c *classifier) isTainted(name string) bool {
	if c.tainted[name] || isInt(name) {
		return true
	}
	switch name {
	case "@", "*", "_", "REPLY", "BASH_REMATCH", "MAPFILE", "BASH_COMMAND", "BASH_ARGV",
		"BASH_ARGV0", "BASH_EXECUTION_STRING", "BASH_SOURCE", "OPTARG", "READLINE_LINE",
		"COMP_LINE", "COMP_WORDS", "FUNCNAME":
		return true
	}
	return false
}

// setsVar refuses a loop, read, mapfile, getopts or printf -v that sets a
// variable which changes how programs are found or behave (PATH, HOME…):
// plain assignments are checked by assign.
func (c *classifier) setsVar(name string) {
	if why := dangerousVar(name); why != "" {
		c.refuse("%s", why)
	}
}

// collectTaint records the variables the command line sets to values that
// are not plain integers.
func (c *classifier) collectTaint(f *syntax.File) {
	intWord := func(w *syntax.Word) bool {
		if w == nil {
			return true
		}
		a := c.analyse(w)
		return a.static && (a.lit == "" || isInt(a.lit))
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && (n.Array != nil || n.Index != nil || !intWord(n.Value)) {
				c.tainted[n.Name.Value] = true
			}
		case *syntax.WordIter:
			c.setsVar(n.Name.Value)
			for _, w := range n.Items {
				if !intWord(w) {
					c.tainted[n.Name.Value] = true
				}
			}
			if !n.InPos.IsValid() {
				c.tainted[n.Name.Value] = true
			}
		case *syntax.ParamExp:
			if n.Param != nil && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && !intWord(n.Exp.Word) {
				c.tainted[n.Param.Value] = true
			}
		case *syntax.CallExpr:
			// read, mapfile, printf -v and the like store input in the
			// variables they are given: taint every name-like word.
			setter := false
			for _, w := range n.Args {
				switch w.Lit() {
				case "read", "mapfile", "readarray", "getopts", "printf":
					setter = true
				}
			}
			if setter {
				for _, w := range n.Args {
					if s := w.Lit(); isIdent(s) {
						c.tainted[s] = true
						c.setsVar(s)
					}
				}
			}
		}
		return true
	})
}
