package mcp

import (
	"path/filepath"
	"strings"
)

// Package is an npm package a stdio server runs through npx (`npx -y
// @scope/server args…`, Claude Code's most common form): ultra installs
// it itself, outside the sandbox and without running its install
// scripts, and starts its program in the sandbox, which has no network
// to fetch it from under most profiles.
type Package struct {
	Spec string   // what npm installs: name, name@version, a tarball's URL
	Name string   // the package's name, the spec without its version
	Bin  string   // the program npx would run ("": the package's own)
	Args []string // the program's arguments
}

// NPX is the package s runs through npx, when its command is npx and its
// arguments say which package plainly (no --call, no shell).
func NPX(s Server) (Package, bool) {
	if s.Type != Stdio || filepath.Base(s.Command) != "npx" {
		return Package{}, false
	}
	var p Package
	args := s.Args
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-y" || a == "--yes" || a == "-q" || a == "--quiet":
			args = args[1:]
		case a == "-p" || a == "--package":
			if len(args) < 2 || p.Spec != "" {
				return Package{}, false
			}
			p.Spec, args = args[1], args[2:]
		case strings.HasPrefix(a, "--package="):
			if p.Spec != "" {
				return Package{}, false
			}
			p.Spec, args = strings.TrimPrefix(a, "--package="), args[1:]
		case a == "--":
			args = args[1:]
			goto command
		case strings.HasPrefix(a, "-"):
			return Package{}, false // an option ultra does not know: npx's own way
		default:
			goto command
		}
	}
command:
	if len(args) == 0 {
		return Package{}, false
	}
	if p.Spec == "" {
		p.Spec = args[0]
	} else {
		p.Bin = args[0]
	}
	p.Args = args[1:]
	p.Name = packageName(p.Spec)
	if p.Name == "" {
		return Package{}, false
	}
	return p, true
}

// packageName is the name in an npm spec (name, name@range, @scope/name,
// @scope/name@range); "" for specs that are no registry name (a path, a
// URL, a git repository).
func packageName(spec string) string {
	if strings.ContainsAny(spec, ":\\ ") || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "~") {
		return ""
	}
	name := spec
	if strings.HasPrefix(spec, "@") {
		scope, rest, ok := strings.Cut(spec[1:], "/")
		if !ok || scope == "" || rest == "" {
			return ""
		}
		n, _, _ := strings.Cut(rest, "@")
		name = "@" + scope + "/" + n
	} else {
		name, _, _ = strings.Cut(spec, "@")
		if strings.Contains(name, "/") {
			return "" // owner/repo: a GitHub shorthand
		}
	}
	if name == "" || strings.HasSuffix(name, "/") {
		return ""
	}
	// What follows the name is a version, a range or a tag, never a
	// path or a URL npm would read as a folder or a repository.
	if v := strings.TrimPrefix(spec, name); v != "" {
		v = strings.TrimPrefix(v, "@")
		if strings.ContainsAny(v, "/\\:") || strings.HasPrefix(v, ".") {
			return ""
		}
	}
	return name
}

// BinOf is the program of package name that npx runs, from its
// package.json's "bin" (a path, or names to paths): the one bin, or the
// one named after the package (its scope dropped), or want when given.
func BinOf(name, want string, bin any) (string, bool) {
	switch b := bin.(type) {
	case string:
		if want == "" || want == lastPart(name) {
			return b, b != ""
		}
	case map[string]any:
		pick := want
		if pick == "" {
			if len(b) == 1 {
				for _, v := range b {
					s, ok := v.(string)
					return s, ok && s != ""
				}
			}
			pick = lastPart(name)
		}
		s, ok := b[pick].(string)
		return s, ok && s != ""
	}
	return "", false
}

func lastPart(name string) string {
	return name[strings.LastIndex(name, "/")+1:]
}
