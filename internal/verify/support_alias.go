package verify

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Module aliases: the names a test loads a file of the tree by that are
// neither relative paths nor packages. A helper imported as "@/testing/eq"
// is as much loaded as one imported as "../testing/eq"; missing the alias
// would leave it unprotected.

// jsAliasMap is what a tsconfig.json (or jsconfig.json) and a
// package.json's jest moduleNameMapper say about bare specifiers.
type jsAliasMap struct {
	base    string              // the directory non-relative names resolve from (baseUrl)
	hasBase bool                // whether baseUrl was set
	paths   map[string][]string // compilerOptions.paths, relative to base
	mappers []jsMapper
}

// jsMapper is one moduleNameMapper entry: a regular expression and its
// replacement, with <rootDir> already replaced.
type jsMapper struct {
	re   *regexp.Regexp
	repl string
}

// jsGroupRef is a group reference in a JavaScript replacement ($1), which
// Go writes ${1}.
var jsGroupRef = regexp.MustCompile(`\$(\d)`)

// jsAliasResolve resolves a bare specifier through the aliases that apply
// to from: the nearest tsconfig.json or jsconfig.json, and the nearest
// package.json's jest moduleNameMapper. "" when none names a file.
func (t *supportTree) jsAliasResolve(from, spec string) string {
	for d := pathDir(from); ; d = pathDir(d) {
		if a := t.jsAliases(d); a != nil {
			for _, m := range a.mappers {
				if m.re.MatchString(spec) {
					if p, ok := pathJoin(m.re.ReplaceAllString(spec, m.repl)); ok {
						if f := t.jsLoad(p, 0); f != "" {
							return f
						}
					}
				}
			}
			// The longest matching pattern wins, as in TypeScript.
			keys := make([]string, 0, len(a.paths))
			for k := range a.paths {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				return len(keys[i]) > len(keys[j]) || len(keys[i]) == len(keys[j]) && keys[i] < keys[j]
			})
			for _, k := range keys {
				star, ok := aliasMatch(k, spec)
				if !ok {
					continue
				}
				for _, target := range a.paths[k] {
					if p, ok := pathJoin(a.base, strings.Replace(target, "*", star, 1)); ok {
						if f := t.jsLoad(p, 0); f != "" {
							return f
						}
					}
				}
			}
			if a.hasBase {
				if p, ok := pathJoin(a.base, spec); ok {
					if f := t.jsLoad(p, 0); f != "" {
						return f
					}
				}
			}
		}
		if d == "" {
			return ""
		}
	}
}

// aliasMatch matches a paths pattern with at most one *.
func aliasMatch(pattern, spec string) (string, bool) {
	pre, suf, wild := strings.Cut(pattern, "*")
	if !wild {
		return "", pattern == spec
	}
	if len(spec) >= len(pre)+len(suf) && strings.HasPrefix(spec, pre) && strings.HasSuffix(spec, suf) {
		return spec[len(pre) : len(spec)-len(suf)], true
	}
	return "", false
}

// jsAliases returns the aliases a directory's tsconfig.json, jsconfig.json
// and package.json declare, or nil.
func (t *supportTree) jsAliases(dir string) *jsAliasMap {
	if t.aliases == nil {
		t.aliases = map[string]*jsAliasMap{}
	}
	if a, ok := t.aliases[dir]; ok {
		return a
	}
	var a *jsAliasMap
	for _, name := range []string{"tsconfig.json", "jsconfig.json"} {
		if p := path.Join(dir, name); t.files[p] {
			a = t.readTSConfig(p, 0)
			break
		}
	}
	if pj := path.Join(dir, "package.json"); t.files[pj] {
		var doc struct {
			Jest struct {
				ModuleNameMapper map[string]any `json:"moduleNameMapper"`
			} `json:"jest"`
		}
		if json.Unmarshal(t.in.Files[pj], &doc) == nil {
			for _, k := range sortedKeys(doc.Jest.ModuleNameMapper) {
				re, err := regexp.Compile(k)
				if err != nil {
					continue
				}
				for _, repl := range decodedStrings(doc.Jest.ModuleNameMapper[k]) {
					repl = jsGroupRef.ReplaceAllString(repl, "$${$1}")
					repl = strings.ReplaceAll(repl, "<rootDir>", "/"+dir)
					if !strings.HasPrefix(repl, "/") {
						continue // a package name
					}
					if a == nil {
						a = &jsAliasMap{}
					}
					a.mappers = append(a.mappers, jsMapper{re: re, repl: strings.TrimPrefix(path.Clean(repl), "/")})
				}
			}
		}
	}
	t.aliases[dir] = a
	return a
}

// readTSConfig reads a tsconfig.json's baseUrl and paths, following a
// relative "extends" for what it does not set.
func (t *supportTree) readTSConfig(p string, depth int) *jsAliasMap {
	var doc struct {
		Extends         any `json:"extends"`
		CompilerOptions struct {
			BaseURL *string             `json:"baseUrl"`
			Paths   map[string][]string `json:"paths"`
		} `json:"compilerOptions"`
	}
	if json.Unmarshal([]byte(jsonc(t.content(p))), &doc) != nil {
		return nil
	}
	dir := pathDir(p)
	a := &jsAliasMap{base: dir, paths: doc.CompilerOptions.Paths}
	if b := doc.CompilerOptions.BaseURL; b != nil {
		if d, ok := pathJoin(dir, *b); ok {
			a.base, a.hasBase = d, true
		}
	}
	if ext, ok := doc.Extends.(string); ok && depth < 3 && strings.HasPrefix(ext, ".") {
		if e, ok := pathJoin(dir, ext); ok {
			if !strings.HasSuffix(e, ".json") && !t.files[e] {
				e += ".json"
			}
			if parent := t.readTSConfig(e, depth+1); parent != nil {
				if !a.hasBase && parent.hasBase {
					a.base, a.hasBase = parent.base, true
				}
				if a.paths == nil {
					a.paths = parent.paths
					if !a.hasBase {
						a.base = parent.base
					}
				}
			}
		}
	}
	return a
}

// jsonc turns JSON with comments and trailing commas (tsconfig.json) into
// JSON.
func jsonc(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(src[i:min(j+1, len(src))])
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				i = len(src)
			} else {
				i += end + 3
			}
		case c == ',':
			rest := strings.TrimLeft(src[i+1:], " \t\r\n")
			if !strings.HasPrefix(rest, "}") && !strings.HasPrefix(rest, "]") {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pyIniPaths returns the directories pytest's pythonpath option adds to
// sys.path: in pyproject.toml, pytest.ini, tox.ini and setup.cfg.
func (t *supportTree) pyIniPaths() []string {
	var out []string
	add := func(dir, v string) {
		if d, ok := pathJoin(dir, v); ok && t.dirs[d] {
			out = append(out, d)
		}
	}
	for _, p := range sortedKeys(t.files) {
		dir := pathDir(p)
		switch path.Base(p) {
		case "pyproject.toml":
			var doc struct {
				Tool struct {
					Pytest struct {
						Ini map[string]any `toml:"ini_options"`
					} `toml:"pytest"`
				} `toml:"tool"`
			}
			if _, err := toml.Decode(t.content(p), &doc); err == nil {
				for _, v := range decodedStrings(doc.Tool.Pytest.Ini["pythonpath"]) {
					for _, w := range strings.Fields(v) {
						add(dir, w)
					}
				}
			}
		case "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg":
			section := ""
			key := false
			for _, l := range strings.Split(t.content(p), "\n") {
				trimmed := strings.TrimSpace(l)
				switch {
				case strings.HasPrefix(trimmed, "["):
					section, key = strings.Trim(trimmed, "[] "), false
				case section != "pytest" && section != "tool:pytest":
				case strings.HasPrefix(trimmed, "pythonpath"):
					_, v, _ := strings.Cut(trimmed, "=")
					key = true
					for _, w := range strings.Fields(v) {
						add(dir, w)
					}
				case key && trimmed != "" && (l[0] == ' ' || l[0] == '\t'):
					for _, w := range strings.Fields(trimmed) {
						add(dir, w)
					}
				default:
					key = false
				}
			}
		}
	}
	return out
}
