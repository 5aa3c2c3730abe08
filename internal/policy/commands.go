package policy

import (
	"fmt"
	"path"
	"strings"
)

// checker judges one simple command: name is its base name, args its
// arguments. It returns "" when the command is read-only, else why not.
type checker func(c *classifier, name string, args []arg) string

// plainCommands only read files and print, whatever their arguments.
var plainCommands = []string{
	"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "stat", "du", "df",
	"pwd", "echo", "true", "false", "basename", "dirname", "realpath", "readlink",
	"cut", "tr", "nl", "diff", "cmp", "comm", "column", "jq", "uname", "whoami", "id",
	"nproc", "free", "ps", "seq", "sleep", "md5sum", "sha1sum", "sha224sum", "sha256sum",
	"sha384sum", "sha512sum", "b2sum", "cksum", "sum", "od", "hexdump", "strings", "tac",
	"rev", "paste", "fold", "join", "printenv", "expr", "which", "uptime",
	"groups", "locale", "getconf",
	// shell builtins
	"type", "cd", "pushd", "popd", "dirs", "exit", "return", "break", "continue", "wait", ":",
}

// shellOnly are builtins xargs cannot run.
var shellOnly = map[string]bool{"type": true, "cd": true, "pushd": true, "popd": true, "dirs": true,
	"exit": true, "return": true, "break": true, "continue": true, "wait": true, ":": true}

var (
	commands map[string]checker
	plainSet = map[string]bool{}
)

func init() {
	commands = map[string]checker{
		"find":     checkFind,
		"sort":     checkSort,
		"uniq":     checkUniq,
		"sed":      checkSed,
		"gsed":     checkSed,
		"awk":      checkAwk,
		"gawk":     checkAwk,
		"mawk":     checkAwk,
		"nawk":     checkAwk,
		"yq":       checkYq,
		"env":      checkEnv,
		"date":     checkDate,
		"hostname": checkHostname,
		"tree":     checkTree,
		"file":     checkFile,
		"xxd":      checkXxd,
		"base64":   checkBase64,
		"arch":     checkArch,
		"rg":       checkRg,
		"printf":   checkPrintf,
		"read":     checkRead,
		"set":      checkSet,
		"test":     checkTest,
		"[":        checkTest,
		"command":  checkCommand,
		"timeout":  checkTimeout,
		"nice":     checkNice,
		"xargs":    checkXargs,
		"sh":       checkShell,
		"bash":     checkShell,
		"dash":     checkShell,
		"go":       checkGo,
		"git":      checkGit,
	}
	for _, n := range plainCommands {
		commands[n] = plain
		plainSet[n] = true
	}
}

// refusals give specific reasons for common commands that write.
var refusals = map[string]string{
	"tee":      "tee writes to files",
	"rm":       "rm deletes files",
	"rmdir":    "rmdir deletes directories",
	"mkdir":    "mkdir creates directories",
	"touch":    "touch creates or changes files",
	"cp":       "cp writes files",
	"mv":       "mv moves files",
	"ln":       "ln creates links",
	"chmod":    "chmod changes permissions",
	"chown":    "chown changes owners",
	"truncate": "truncate changes files",
	"dd":       "dd can write files",
	"install":  "install writes files",
	"eval":     "eval runs arbitrary code",
	"exec":     "exec replaces the shell with another program",
	"source":   "source runs a script that cannot be checked",
	".":        "source (.) runs a script that cannot be checked",
	"make":     "make runs build rules that can change files",
	"less":     "less is interactive; use cat, head or sed -n instead",
	"more":     "more is interactive; use cat, head or sed -n instead",
	"vi":       "editors are interactive and write files",
	"vim":      "editors are interactive and write files",
	"nano":     "editors are interactive and write files",
	"sudo":     "sudo runs commands as another user",
	"kill":     "kill signals processes",
	"unset":    "unset changes shell state",
	"alias":    "alias changes shell state",
	"trap":     "trap runs commands later",
}

// interpreters run code given to them; never read-only.
var interpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "node": true, "nodejs": true,
	"ruby": true, "perl": true, "deno": true, "bun": true, "php": true, "lua": true,
	"Rscript": true, "irb": true, "zsh": true, "fish": true, "ksh": true, "csh": true, "tcsh": true,
}

// trustedDirs hold the system's programs; an absolute command name there
// is judged by its base name.
var trustedDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/usr/local/go/bin", "/opt/homebrew/bin"}

func plain(*classifier, string, []arg) string { return "" }

// checkArgs judges a simple command given as analysed words.
func (c *classifier) checkArgs(args []arg) string {
	if len(args) == 0 {
		return ""
	}
	first := args[0]
	if !first.static {
		return fmt.Sprintf("the command name %s is computed; write the command literally", first.text)
	}
	name := first.lit
	if strings.Contains(name, "/") {
		dir, base := path.Split(name)
		dir = path.Clean(dir)
		trusted := false
		for _, d := range trustedDirs {
			trusted = trusted || dir == d
		}
		if !trusted {
			return fmt.Sprintf("`%s` is not a system program; only programs from the system directories are judged read-only", name)
		}
		name = base
	}
	if name == "" {
		return "empty command name"
	}
	if check, ok := commands[name]; ok {
		return check(c, name, args[1:])
	}
	if why, ok := refusals[name]; ok {
		return why
	}
	if interpreters[name] {
		for _, a := range args[1:] {
			if a.static && (a.lit == "-c" || a.lit == "-e" || a.lit == "--eval") {
				return fmt.Sprintf("%s %s runs arbitrary code", name, a.lit)
			}
		}
		return fmt.Sprintf("`%s` runs arbitrary code", name)
	}
	return fmt.Sprintf("command `%s` is not known to be read-only", name)
}

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

func checkDate(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		shortVal:    "dfr",
		shortOptVal: "I",
		// --resolution takes no value: its next word is an operand.
		longVal: []string{"date", "file", "reference", "rfc-3339"},
		badShort: map[byte]string{
			's': "date -s sets the system clock",
			't': "date -t sets the kernel's time zone (BSD date)",
		},
		badLong: map[string]string{"set": "date --set sets the system clock"},
	})
	if why != "" {
		return why
	}
	for _, a := range p.operands {
		if !strings.HasPrefix(a.prefix, "+") {
			return fmt.Sprintf("date with an operand other than +FORMAT (%s) sets the clock", a.text)
		}
	}
	return ""
}

func checkHostname(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{
		badShort: map[byte]string{'F': "hostname -F sets the host name", 'b': "hostname -b sets the host name"},
		badLong:  map[string]string{"file": "hostname --file sets the host name", "boot": "hostname --boot sets the host name"},
	})
	if why != "" {
		return why
	}
	if len(p.operands) > 0 {
		return fmt.Sprintf("hostname with an argument (%s) sets the host name", p.operands[0].text)
	}
	return ""
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

// checkArch allows arch only to print the machine type: macOS arch runs
// the program it is given (arch -x86_64 prog).
func checkArch(_ *classifier, name string, args []arg) string {
	if len(args) == 0 || len(args) == 1 && args[0].static && (args[0].lit == "--help" || args[0].lit == "--version") {
		return ""
	}
	return "arch with arguments runs a program on macOS; use `uname -m` to print the machine type"
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

func checkPrintf(_ *classifier, name string, args []arg) string {
	if len(args) == 0 {
		return ""
	}
	a := args[0]
	if !a.static && !a.dashSafe() {
		return notLiteral(name, a)
	}
	if a.static && strings.HasPrefix(a.lit, "-v") {
		return "printf -v assigns a shell variable; print the value instead"
	}
	return ""
}

// checkRead allows read with plain variable names: a subscripted name
// would be evaluated and could run commands.
func checkRead(_ *classifier, name string, args []arg) string {
	p, why := scanOpts(name, args, optSpec{shortVal: "adinNptu"})
	if why != "" {
		return why
	}
	names := append(p.values("-a"), p.operands...)
	for _, a := range names {
		if !a.static || !isIdent(a.lit) {
			return fmt.Sprintf("read needs plain variable names, not %s", a.text)
		}
	}
	return ""
}

// safeShellOptions are the set -o options allowed: none of them makes
// bash run anything or changes how commands are found.
var safeShellOptions = map[string]bool{"errexit": true, "nounset": true, "pipefail": true,
	"xtrace": true, "verbose": true, "noclobber": true, "noglob": true}

// checkSet allows setting a few shell options.
func checkSet(_ *classifier, name string, args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return fmt.Sprintf("set with a computed argument (%s) is not allowed", a.text)
		}
		l := a.lit
		if len(l) < 2 || (l[0] != '-' && l[0] != '+') || l == "--" {
			return "set with arguments replaces the positional parameters; not allowed"
		}
		for _, ch := range l[1:] {
			switch {
			case ch == 'o':
				if i+1 < len(args) {
					i++
					if n := args[i]; !n.static || !safeShellOptions[n.lit] {
						return fmt.Sprintf("set -o %s is not allowed", n.text)
					}
				}
			case strings.ContainsRune("euxvCf", ch):
			default:
				return fmt.Sprintf("set -%c is not allowed", ch)
			}
		}
	}
	return ""
}

// checkTest guards test and [ against -v and -R, which evaluate array
// subscripts in their operand and can run commands.
func checkTest(_ *classifier, name string, args []arg) string {
	binary := map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true,
		"-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true,
		"-nt": true, "-ot": true, "-ef": true, "-a": true, "-o": true, "]": true, ")": true}
	for i, a := range args {
		next := arg{static: true, lit: "]"}
		if i+1 < len(args) {
			next = args[i+1]
		}
		if a.static && (a.lit == "-v" || a.lit == "-R") && !(next.static && (next.lit == "]" || next.lit == ")")) && i+1 < len(args) {
			if !safeVarRef(next) {
				return fmt.Sprintf("%s %s with a computed or subscripted name can run commands", name, a.lit)
			}
		}
		if !a.static && a.untrusted {
			if a.split {
				return fmt.Sprintf("unquoted %s in %s could expand to operators; quote it", a.text, name)
			}
			if !a.dashSafe() && i+1 < len(args) && !(next.static && binary[next.lit]) {
				return fmt.Sprintf("%s in %s could expand to an operator such as -v; compare it with = instead", a.text, name)
			}
		}
	}
	return ""
}

// checkCommand: command -v/-V only looks a name up; otherwise the named
// command runs and is judged itself.
func checkCommand(c *classifier, name string, args []arg) string {
	for i, a := range args {
		if !a.static {
			return c.checkArgs(args[i:])
		}
		switch a.lit {
		case "-v", "-V", "-pv", "-pV", "-vp", "-Vp":
			return ""
		case "-p", "--":
			continue
		}
		return c.checkArgs(args[i:])
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
