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
