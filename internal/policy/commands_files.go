package policy

import (
	"fmt"
	"strings"
)

func checkFind(_ *classifier, name string, args []arg) string {
	takesValue := map[string]bool{
		"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true,
		"-iwholename": true, "-regex": true, "-iregex": true, "-lname": true, "-ilname": true,
		"-type": true, "-xtype": true, "-newer": true, "-user": true, "-group": true,
		"-perm": true, "-size": true, "-mtime": true, "-mmin": true, "-atime": true,
		"-amin": true, "-ctime": true, "-cmin": true, "-maxdepth": true, "-mindepth": true,
		"-samefile": true, "-printf": true, "-uid": true, "-gid": true, "-links": true,
		"-inum": true, "-used": true, "-fstype": true, "-context": true,
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if a.dashSafe() {
				continue
			}
			return notLiteral(name, a)
		}
		switch a.lit {
		case "-exec", "-execdir", "-ok", "-okdir":
			return fmt.Sprintf("find %s runs commands", a.lit)
		case "-delete":
			return "find -delete removes files"
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			return fmt.Sprintf("find %s writes to a file", a.lit)
		}
		// The test's value is the next word, whatever it looks like
		// (-name -delete matches files named "-delete"); a value that may
		// become several words is judged as a word of its own.
		if takesValue[a.lit] && i+1 < len(args) && !args[i+1].multi {
			i++
		}
	}
	return ""
}

func checkSort(_ *classifier, name string, args []arg) string {
	_, why := scanOpts(name, args, optSpec{
		shortVal: "kotST",
		longVal: []string{"key", "field-separator", "buffer-size", "temporary-directory",
			"files0-from", "parallel", "batch-size", "sort", "random-source"},
		badShort: map[byte]string{'o': "sort -o writes its output to a file"},
		badLong: map[string]string{
			"output":           "sort --output writes its output to a file",
			"compress-program": "sort --compress-program runs a program",
		},
	})
	return why
}

func checkUniq(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal: "fsw",
		longVal:  []string{"skip-fields", "skip-chars", "check-chars"},
	})
	if why != "" {
		return why
	}
	for _, a := range p.operands {
		if a.multi {
			return fmt.Sprintf("uniq argument %s may expand to several files, and uniq writes to its second one", a.text)
		}
	}
	if len(p.operands) > 1 {
		return fmt.Sprintf("uniq with two file arguments writes the second one (%s)", p.operands[1].text)
	}
	return ""
}

func checkSed(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal: "ef",
		longVal:  []string{"expression", "file", "line-length"},
		badShort: map[byte]string{
			'i': "sed -i edits files in place",
			'I': "sed -I edits files in place (BSD sed)",
			// GNU sed -l takes a value, BSD sed -l does not: the script
			// could be either word.
			'l': "sed -l takes a value in GNU sed but not in BSD sed, so the script is ambiguous; use --line-length=N",
		},
		badLong: map[string]string{"in-place": "sed --in-place edits files in place"},
	})
	if why != "" {
		return why
	}
	if p.has("-f", "--file") {
		return "sed -f runs a script file that cannot be checked; give the script inline"
	}
	scripts := p.values("-e", "--expression")
	if len(scripts) == 0 {
		if len(p.operands) == 0 {
			return ""
		}
		scripts = p.operands[:1]
	}
	var texts []string
	for _, s := range scripts {
		if !s.static {
			return fmt.Sprintf("sed script %s is computed and cannot be checked", s.text)
		}
		texts = append(texts, s.lit)
	}
	return sedScriptReason(strings.Join(texts, "\n"))
}

func checkAwk(_ *classifier, name string, args []arg) string {
	fileWhy := name + " -f runs a program file that cannot be checked; give the program inline"
	ambiguous := func(ch string) string {
		return name + " -" + ch + " takes a value in some awks and not in others, so the program is ambiguous; leave it out"
	}
	p, why := scanOpts(name, args, optSpec{
		shortVal:    "FvfeEilW",
		shortOptVal: "dDoLp",
		longVal:     []string{"field-separator", "assign", "source"},
		badShort: map[byte]string{
			'f': fileWhy,
			'E': fileWhy,
			'i': name + " -i loads source or extensions such as inplace",
			'l': name + " -l loads an extension",
			'd': name + " -d writes variables to a file",
			'D': name + " -D starts the debugger",
			'o': name + " -o writes the program to a file",
			'p': name + " -p writes a profile to a file",
			'W': name + " -W options are not allowed",
			'Z': ambiguous("Z"), // old gawk: -Z locale
			'm': ambiguous("m"), // old gawk: -m[fr] value
			'R': ambiguous("R"), // dgawk: -R file
		},
		badLong: map[string]string{
			"file":           fileWhy,
			"exec":           fileWhy,
			"include":        name + " --include loads source or extensions such as inplace",
			"load":           name + " --load loads an extension",
			"dump-variables": name + " --dump-variables writes to a file",
			"debug":          name + " --debug starts the debugger",
			"pretty-print":   name + " --pretty-print writes to a file",
			"profile":        name + " --profile writes to a file",
		},
		stopAtOperand: true,
	})
	if why != "" {
		return why
	}
	// one-true-awk (macOS, BSD) reads only the first letter of an option
	// word and ignores options it does not know, long ones included, so
	// the next word becomes its program. Allow only the forms every awk
	// reads alike.
	for _, o := range p.opts {
		switch {
		case o.pos > 1 && strings.IndexByte("Fve", o.name[1]) >= 0:
			return fmt.Sprintf("write %s %s as a separate word: some awks read only the first letter of an option word", name, o.name)
		case (o.name == "-e" || o.name == "--source") && o.attached:
			return fmt.Sprintf("give the program of %s %s as the next word: some awks ignore the option and would run the word after it", name, o.name)
		case (o.name == "--assign" || o.name == "--field-separator") && o.value != nil && !o.attached:
			return fmt.Sprintf("write %s %s=VALUE as one word: some awks ignore long options and would run the value as the program", name, o.name)
		}
	}
	progs := p.values("-e", "--source")
	if len(progs) == 0 {
		if len(p.rest) == 0 {
			return ""
		}
		progs = p.rest[:1]
	}
	for _, prog := range progs {
		if !prog.static {
			return fmt.Sprintf("%s program %s is computed and cannot be checked", name, prog.text)
		}
		if why := awkProgramReason(prog.lit); why != "" {
			return why
		}
	}
	return ""
}

func checkYq(_ *classifier, name string, args []arg) string {
	_, why := scanOpts(name, args, optSpec{
		shortVal: "fIop",
		longVal: []string{"front-matter", "indent", "output-format", "input-format", "expression",
			"from-file", "xml-attribute-prefix", "xml-content-name", "xml-proc-inst-prefix",
			"xml-directive-name", "csv-separator", "lua-prefix", "lua-suffix",
			"properties-separator", "shell-key-separator"},
		badShort: map[byte]string{'i': "yq -i edits files in place", 's': "yq -s writes files"},
		badLong: map[string]string{
			"inplace":        "yq --inplace edits files in place",
			"in-place":       "yq --in-place edits files in place",
			"split-exp":      "yq --split-exp writes files",
			"split-exp-file": "yq --split-exp-file writes files",
		},
	})
	return why
}

// treeLongValues are tree's long options taking a value, after "=" or in
// the next word. tree matches them as the start of the word, so
// --sortx y takes y too.
var treeLongValues = []string{"--filelimit", "--charset", "--timefmt", "--sort", "--gitfile",
	"--infofile", "--hintro", "--houtro", "--scheme", "--authority", "--compress"}

// checkTree follows tree's own parser, which is not getopt: options may
// come anywhere before "--", and in a cluster every letter that takes a
// value takes the next unused word (-Lo 2 out is -L 2 -o out), except -L
// followed by digits (-L2).
func checkTree(_ *classifier, name string, args []arg) string {
	next := 0 // the next word a value would be taken from
	value := func(opt string) string {
		if next >= len(args) {
			return "" // tree stops: missing argument
		}
		v := args[next]
		next++
		if v.multi {
			return fmt.Sprintf("the value %s of tree %s must be a single word; quote it", v.text, opt)
		}
		return ""
	}
	for i := 0; i < len(args); i = next {
		next = i + 1
		a := args[i]
		if !a.static {
			if !a.dashSafe() {
				return notLiteral(name, a)
			}
			continue
		}
		l := a.lit
		switch {
		case l == "--":
			return "" // the rest are directories
		case len(l) < 2 || l[0] != '-':
			continue
		case l[1] == '-':
			for _, lv := range treeLongValues {
				if strings.HasPrefix(l, lv) {
					if !strings.HasPrefix(l[len(lv):], "=") {
						if why := value(l); why != "" {
							return why
						}
					}
					break
				}
			}
			continue
		}
		for j := 1; j < len(l); j++ {
			ch := l[j]
			switch {
			case ch == 'o':
				return "tree -o writes its output to a file"
			case ch == 'R':
				return "tree -R writes 00Tree.html files"
			case ch == 'L' && j+1 < len(l) && l[j+1] >= '0' && l[j+1] <= '9':
				for j+1 < len(l) && l[j+1] >= '0' && l[j+1] <= '9' {
					j++
				}
			case strings.IndexByte("LPIHT", ch) >= 0:
				if why := value("-" + string(ch)); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

func checkFile(_ *classifier, name string, args []arg) string {
	_, why := scanOpts(name, args, optSpec{
		shortVal: "eFfmP",
		longVal:  []string{"exclude", "exclude-quiet", "separator", "files-from", "magic-file", "parameter"},
		badShort: map[byte]string{'C': "file -C compiles a magic file"},
		badLong:  map[string]string{"compile": "file --compile writes a magic file"},
	})
	return why
}

// xxdValueTails lists the xxd options that take a value, by letter, with
// the long-name tails after which the value is the next word (-cols 8).
// Any other text after the letter is the value itself: -c8, and -ca is
// -c with the value "a". xxd reads only the first letter of an option
// word (-capitalize aside): -ps, -plain and -postscript are all -p.
var xxdValueTails = map[byte][]string{
	'c': {"ols"}, 'g': {"roup"}, 'l': {"en"}, 'n': {"ame"}, 'o': {"ffset"},
	's': {"kip", "eek"}, 'R': nil,
}

// checkXxd follows xxd's option parser. Options end at the first operand;
// the second operand is an output file that xxd writes, and -r turns a
// dump back into binary, patching that file. So xxd is read-only with at
// most one operand and no -r.
func checkXxd(_ *classifier, name string, args []arg) string {
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !a.dashSafe() {
				return notLiteral(name, a)
			}
			break // the first operand
		}
		o := a.lit
		if len(o) > 2 && strings.HasPrefix(o, "--") {
			o = o[1:] // --cols is -cols, and --- is --
		}
		switch {
		case o == "--":
			i++
			break options
		case len(o) < 2 || o[0] != '-':
			break options // the first operand; "-" is standard input
		}
		letter, tail := o[1], o[2:]
		switch {
		case letter == 'r':
			return "xxd -r turns a dump back into binary and can patch its output file; only dumping is allowed"
		case letter == 'c' && strings.HasPrefix(tail, "apitalize"):
		case strings.IndexByte("abeupiCdEvh", letter) >= 0:
			// takes no value; the rest of the word is ignored
		default:
			tails, ok := xxdValueTails[letter]
			if !ok {
				return fmt.Sprintf("xxd option %s is not known", a.lit)
			}
			next := tail == ""
			for _, t := range tails {
				next = next || strings.HasPrefix(tail, t)
			}
			if next && i+1 < len(args) {
				i++
				if args[i].multi {
					return fmt.Sprintf("the value %s of xxd %s must be a single word; quote it", args[i].text, a.lit)
				}
			}
		}
	}
	operands := args[i:]
	for _, a := range operands {
		if a.multi {
			return fmt.Sprintf("xxd argument %s may expand to several files, and xxd writes to its second one", a.text)
		}
	}
	if len(operands) > 1 {
		return fmt.Sprintf("xxd with two file arguments writes the second one (%s)", operands[1].text)
	}
	return ""
}

// checkBase64 refuses -o/--output, with which macOS base64 writes a file.
func checkBase64(_ *classifier, name string, args []arg) string {
	_, why := scanOpts(name, args, optSpec{
		shortVal: "wb", // GNU -w COLS, macOS -b COUNT
		longVal:  []string{"wrap", "break"},
		badShort: map[byte]string{'o': "base64 -o writes its output to a file"},
		badLong:  map[string]string{"output": "base64 --output writes its output to a file"},
	})
	return why
}

func checkRg(_ *classifier, name string, args []arg) string {
	_, why := scanOpts(name, args, optSpec{
		shortVal: "ABCefgjmMrtTEd",
		longVal: []string{"regexp", "file", "glob", "iglob", "type", "type-not", "type-add",
			"type-clear", "max-count", "max-depth", "maxdepth", "max-filesize", "replace",
			"context", "after-context", "before-context", "encoding", "threads", "sort", "sortr",
			"color", "colors", "context-separator", "field-context-separator",
			"field-match-separator", "path-separator", "pre-glob", "engine", "dfa-size-limit",
			"regex-size-limit", "max-columns", "ignore-file", "hyperlink-format", "generate"},
		badLong: map[string]string{
			"pre":          "rg --pre runs a program on every file",
			"hostname-bin": "rg --hostname-bin runs a program",
		},
	})
	return why
}
