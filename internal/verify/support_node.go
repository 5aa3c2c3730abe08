package verify

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
)

// jsFrameworks are the packages of JavaScript test frameworks and
// assertion libraries.
var jsFrameworks = map[string]bool{
	"assert": true, "chai": true, "expect": true, "sinon": true, "jest": true, "@jest/globals": true,
	"vitest": true, "mocha": true, "node:test": true, "should": true, "supertest": true, "uvu": true,
	"ava": true, "tap": true, "tape": true, "jasmine": true, "qunit": true, "power-assert": true,
	"expect.js": true, "unexpected": true, "nock": true, "@playwright/test": true, "cypress": true,
	"testdouble": true, "@sinonjs/fake-timers": true, "@vitest/expect": true, "@jest/expect": true,
}

// jsFramework returns the framework a specifier names, or "".
func jsFramework(spec string) string {
	name := jsPackageName(strings.TrimPrefix(spec, "node:"))
	switch {
	case spec == "node:test" || spec == "node:assert" || strings.HasPrefix(spec, "node:assert/"):
		return spec
	case jsFrameworks[name], strings.HasPrefix(name, "@testing-library/"), strings.HasPrefix(name, "chai-"):
		return name
	}
	return ""
}

// jsPackageName is the package of a bare specifier: "a" of "a/b",
// "@s/a" of "@s/a/b".
func jsPackageName(spec string) string {
	parts := strings.SplitN(spec, "/", 3)
	if strings.HasPrefix(spec, "@") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// jsExts are the extensions Node (and TypeScript's resolvers) try, in order.
var jsExts = []string{".js", ".mjs", ".cjs", ".json", ".ts", ".tsx", ".mts", ".cts", ".jsx"}

// isJSFile reports whether p is JavaScript or TypeScript source (a
// declaration file is not).
func isJSFile(p string) bool {
	switch path.Ext(p) {
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".jsx":
		return !strings.HasSuffix(p, ".d.ts")
	}
	return false
}

// jsResolve resolves a specifier loaded from file, as Node does: a
// relative path as a file, with an extension, as a directory (its
// package.json main, its index); a bare one through the aliases of
// tsconfig.json and jest's moduleNameMapper, node_modules/ and the tree's
// own packages (workspaces). "" is outside the tree.
func (t *supportTree) jsResolve(from, spec string, pkgs map[string]string) string {
	if strings.HasPrefix(spec, "node:") || spec == "" {
		return ""
	}
	if spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") {
		base, ok := pathJoin(pathDir(from), spec)
		if !ok {
			return ""
		}
		return t.jsLoad(base, 0)
	}
	if strings.HasPrefix(spec, "/") {
		return ""
	}
	if f := t.jsAliasResolve(from, spec); f != "" {
		return f
	}
	name := jsPackageName(spec)
	sub := strings.TrimPrefix(strings.TrimPrefix(spec, name), "/")
	for d := pathDir(from); ; d = pathDir(d) {
		if nm := path.Join(d, "node_modules", name); t.dirs[nm] {
			if f := t.jsLoad(path.Join(nm, sub), 0); f != "" {
				return f
			}
		}
		if d == "" {
			break
		}
	}
	if dir, ok := pkgs[name]; ok {
		p, _ := pathJoin(dir, sub)
		return t.jsLoad(p, 0)
	}
	return ""
}

// jsLoad resolves base as a file, then as a directory.
func (t *supportTree) jsLoad(base string, depth int) string {
	if t.files[base] {
		return base
	}
	for _, e := range jsExts {
		if t.files[base+e] {
			return base + e
		}
	}
	// TypeScript: "./x.js" names x.ts.
	for js, tss := range map[string][]string{".js": {".ts", ".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}, ".jsx": {".tsx"}} {
		if stem, ok := strings.CutSuffix(base, js); ok {
			for _, ts := range tss {
				if t.files[stem+ts] {
					return stem + ts
				}
			}
		}
	}
	if !t.dirs[base] || depth > 2 {
		return ""
	}
	if pj := path.Join(base, "package.json"); t.files[pj] {
		var doc struct {
			Main any `json:"main"`
		}
		if json.Unmarshal(t.in.Files[pj], &doc) == nil {
			if m, ok := doc.Main.(string); ok && m != "" {
				if p, ok := pathJoin(base, m); ok {
					if f := t.jsLoad(p, depth+1); f != "" {
						return f
					}
				}
			}
		}
	}
	for _, e := range jsExts {
		if f := path.Join(base, "index"+e); t.files[f] {
			return f
		}
	}
	return ""
}

// jsSubjects are the names a test file is named after: calc for
// calc.test.js, calc.spec.ts, calc_test.js and test/calc.js; calc.add and
// calc for calc.add.test.js.
func jsSubjects(p string) []string {
	stem := path.Base(p)
	stem = strings.TrimSuffix(stem, path.Ext(stem))
	for _, suf := range []string{".test", ".spec", "_test", "-test", ".e2e"} {
		if s, ok := strings.CutSuffix(stem, suf); ok {
			return namePrefixes(s, ".-_")
		}
	}
	if IsTestPath(p) && !IsTestConfig(p) {
		return namePrefixes(stem, ".-_")
	}
	return nil
}

// jsName is the name a file is required by: calc for calc.js, for
// calc/index.js.
func jsName(p string) string {
	stem := path.Base(p)
	stem = strings.TrimSuffix(stem, path.Ext(stem))
	if stem == "index" {
		return path.Base(pathDir(p))
	}
	return stem
}

// jsSupport classifies the tree's JavaScript and TypeScript files. run are
// files the test commands run or name, configs the runner configurations
// they name.
func (t *supportTree) jsSupport(run, configs map[string]string) {
	if run == nil {
		run = map[string]string{}
	}
	pkgs := map[string]string{}  // package name → directory
	direct := map[string]bool{}  // code roots of their own
	setup := map[string]string{} // files test configurations name → why
	for _, pj := range sortedKeys(t.files) {
		if path.Base(pj) != "package.json" || hasComponent(pj, "node_modules") {
			continue
		}
		var doc map[string]any
		if json.Unmarshal(t.in.Files[pj], &doc) != nil {
			continue
		}
		dir := pathDir(pj)
		if name, ok := doc["name"].(string); ok && name != "" {
			pkgs[name] = dir
		}
		for _, key := range []string{"main", "module", "bin", "exports", "browser"} {
			for _, s := range decodedStrings(doc[key]) {
				if p, ok := pathJoin(dir, s); ok {
					if f := t.jsLoad(p, 0); f != "" {
						direct[f] = true
					}
				}
			}
		}
		for _, runner := range []string{"jest", "mocha", "ava"} {
			cfg, _ := doc[runner].(map[string]any)
			for _, key := range sortedKeys(cfg) {
				if !jsFileKeys[key] {
					continue
				}
				for _, s := range decodedStrings(cfg[key]) {
					if f := t.jsConfigPath(dir, s); f != "" {
						setup[f] = "named in " + pj + "'s " + runner + " " + key
					}
				}
			}
		}
	}
	// A runner's configuration file names its setup files among other
	// strings (a build entry, an alias): what the project's code reaches is
	// code, the rest is support (below).
	loose := map[string]string{}
	for _, p := range sortedKeys(t.files) {
		if _, named := configs[p]; !named && (!isJSTestConfig(p) || hasComponent(p, "node_modules")) {
			continue
		}
		strs := jsConfigFileRe.FindAllString(t.content(p), -1)
		if isJSFile(p) {
			strs = parseJSStrings(t.content(p))
		}
		for _, s := range strs {
			if f := t.jsConfigPath(pathDir(p), s); f != "" && f != p && !IsTestPath(f) {
				loose[f] = "named in " + p
			}
		}
	}
	for _, f := range sortedKeys(setup) {
		t.support(f, setup[f]+" (JavaScript)")
		if _, ok := run[f]; !ok {
			run[f] = setup[f]
		}
	}
	isTest := func(p string) bool { return IsTestPath(p) || run[p] != "" }
	// The test units, and the files with a #! line (commands). The tests
	// of packages under node_modules/ are not the project's.
	var units []string
	for _, p := range t.in.Paths {
		if !isJSFile(p) || !t.files[p] || hasComponent(p, "node_modules") && run[p] == "" {
			continue
		}
		if isTest(p) {
			units = append(units, p)
		} else if strings.HasPrefix(t.content(p), "#!") {
			direct[p] = true
		}
	}
	for _, f := range sortedKeys(run) {
		if isJSFile(f) && t.files[f] && !slices.Contains(units, f) {
			units = append(units, f)
		}
	}
	// Files are read as the walk reaches them: a tree's node_modules/ is
	// large, and what nothing loads needs no reading.
	parsed := map[string]*jsFile{}
	parse := func(p string) *jsFile {
		if f, ok := parsed[p]; ok {
			return f
		}
		f := parseJS(t.content(p))
		parsed[p] = &f
		return &f
	}
	resolved := map[string][]string{}
	edges := func(p string) []string {
		if r, ok := resolved[p]; ok {
			return r
		}
		var out []string
		if isJSFile(p) {
			for _, s := range parse(p).specs {
				if f := t.jsResolve(p, s, pkgs); f != "" && !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
		resolved[p] = out
		return out
	}
	code := func(p string) []string {
		if isTest(p) {
			return nil
		}
		return edges(p)
	}
	subject, imported := map[string]bool{}, map[string][]string{} // a test is named after it; the tests that load it
	for _, u := range units {
		subjects := jsSubjects(u)
		for _, f := range edges(u) {
			imported[f] = append(imported[f], u)
			if slices.Contains(subjects, jsName(f)) && !isTest(f) {
				direct[f], subject[f] = true, true
			}
		}
	}
	reached := reachFrom(sortedKeys(direct), code)
	for p := range reached {
		if !isTest(p) {
			t.codeFile(p)
		}
	}
	for _, f := range sortedKeys(loose) {
		if !reached[f] && !isTest(f) {
			t.support(f, loose[f]+" (JavaScript)")
			run[f] = loose[f]
			if isJSFile(f) {
				units = append(units, f)
			}
		}
	}
	loaded := testLoads(units, edges, code)
	for _, p := range sortedKeys(loaded) {
		if isTest(p) {
			continue
		}
		f := &jsFile{}
		if isJSFile(p) {
			f = parse(p)
		}
		switch {
		case f.marker != "":
			t.support(p, f.marker+", loaded by tests (JavaScript)")
		case jsFramework(nodeModulesPackage(p)) != "":
			t.support(p, "test framework package "+nodeModulesPackage(p)+" (JavaScript)")
		case supportName(p) != "":
			t.support(p, "support-named ("+supportName(p)+"), loaded by tests (JavaScript)")
		case reached[p]:
			// Code the tests load to assert with, but for the file a test
			// is named after: the code that test tests.
			uses := func(name string) bool {
				return slices.ContainsFunc(imported[p], func(u string) bool {
					code, _, _ := lexJS(t.content(u))
					return hasWord(code, name)
				})
			}
			if m := f.helperMarker(uses); m != "" && len(imported[p]) > 0 && !subject[p] {
				t.helperUndecided(p, "assertion helper that tests and code both load ("+m+") (JavaScript)")
			}
		case f.throwsAE:
			t.support(p, "throws AssertionError, loaded only by tests (JavaScript)")
		case f.helper != "":
			t.support(p, f.helper+", loaded only by tests (JavaScript)")
		case hasComponent(p, "node_modules"):
			t.support(p, "under node_modules/, loaded only by tests (JavaScript)")
		default:
			t.undecided(p, "loaded only by tests ("+loaded[p]+"), no test is named after it (JavaScript)")
		}
	}
	for _, p := range append(slices.Clone(units), sortedKeys(loaded)...) {
		if isJSFile(p) && (isTest(p) || !reached[p]) && parse(p).dynamic {
			t.dynamic = append(t.dynamic, supportDynamic{dir: testArea(p), exts: []string{".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".jsx"},
				why: p + " loads modules by a computed name (JavaScript)"})
		}
	}
}

// nodeModulesPackage is the package a path under node_modules/ is in, or "".
func nodeModulesPackage(p string) string {
	i := strings.LastIndex(p, "node_modules/")
	if i < 0 {
		return ""
	}
	return jsPackageName(p[i+len("node_modules/"):])
}

// jsConfigPath resolves a string of a test configuration that names a
// file of the tree (<rootDir>/setup.js, ./setup.js), or "".
func (t *supportTree) jsConfigPath(dir, s string) string {
	s = strings.TrimSpace(s)
	if r, ok := strings.CutPrefix(s, "<rootDir>/"); ok {
		s = "./" + r
	}
	if s == "" || strings.ContainsAny(s, "*$^()|<>\n") || strings.Contains(s, "://") {
		return ""
	}
	if !strings.HasPrefix(s, "./") && !strings.HasPrefix(s, "../") && !strings.Contains(s, "/") && !strings.Contains(s, ".") {
		return ""
	}
	p, ok := pathJoin(dir, s)
	switch {
	case !ok || p == "":
		return ""
	case t.files[p]:
		return p
	}
	for _, e := range jsExts {
		if t.files[p+e] {
			return p + e
		}
	}
	return "" // a directory names no one file
}

// jsFileKeys are the keys of a runner's configuration in package.json
// that name files the runner loads.
var jsFileKeys = map[string]bool{
	"setupFiles": true, "setupFilesAfterEnv": true, "globalSetup": true, "globalTeardown": true,
	"testEnvironment": true, "testRunner": true, "snapshotResolver": true, "testResultsProcessor": true,
	"reporters": true, "transform": true, "watchPlugins": true, "resolver": true, "testSequencer": true,
	"runner": true, "dependencyExtractor": true, "snapshotSerializers": true, "require": true, "file": true,
}

// isJSTestConfig reports whether p configures a JavaScript test runner
// (jest.config.js, vitest.config.ts, .mocharc.yml, …).
func isJSTestConfig(p string) bool {
	base := path.Base(p)
	if strings.HasPrefix(base, ".mocharc") || base == ".babelrc" {
		return true
	}
	for _, pre := range testConfigPrefixes {
		if strings.HasPrefix(base, pre) {
			return true
		}
	}
	return false
}

// jsConfigFileRe finds the file names in a test configuration that is not
// JavaScript (.mocharc.yml, .mocharc.json).
var jsConfigFileRe = regexp.MustCompile(`[\w./<>@-]+\.(?:js|cjs|mjs|ts|mts|cts|jsx|tsx)\b`)

// decodedStrings returns every string in a decoded JSON or TOML value
// (strings, lists, tables), in a stable order.
func decodedStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, decodedStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(v) {
			out = append(out, decodedStrings(v[k])...)
		}
		return out
	}
	return nil
}
