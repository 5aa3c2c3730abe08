package verify

import (
	"fmt"
	"go/version"
	"maps"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// A go.mod decides more than which modules a build uses: its go line
// sets the language the packages compile as (a loop variable per loop
// before go 1.22, per iteration after), and its godebug lines set
// run-time behaviour the tests see. Lowering the one or changing the
// others can make existing tests prove less without touching a test, so
// the gate treats those lines as test configuration: the original tests
// run with the go.mod as the run left it but those lines as they were
// (GoModSettings). Raising the go line (to use a newer feature) and
// changing requirements are the code's business.

// GoModSettings compares a go.mod as it was (old) with the run's (new).
// When the run lowered the go line, removed it, or changed the godebug
// settings, it says what changed and returns new with old's go line and
// godebug settings; otherwise changed is empty. A run's go.mod that
// does not parse where the old one did is a change too (fail closed): the
// old one is what the original tests run with.
func GoModSettings(name, old, new string) (changed []string, spliced string) {
	of, err := modfile.Parse(name, []byte(old), nil)
	if err != nil {
		return nil, ""
	}
	nf, err := modfile.Parse(name, []byte(new), nil)
	if err != nil {
		return []string{fmt.Sprintf("changed %s so that ultra cannot read its go line and godebug settings (%v)", name, strings.SplitN(err.Error(), "\n", 2)[0])}, old
	}
	ov, nv := goLine(of), goLine(nf)
	if version.Compare("go"+nv, "go"+ov) < 0 {
		changed = append(changed, fmt.Sprintf("lowered the go line of %s from %s to %s (how the packages compile)", name, goLineText(of), goLineText(nf)))
	}
	og, ng := godebugs(of), godebugs(nf)
	if !maps.Equal(og, ng) {
		changed = append(changed, fmt.Sprintf("changed the godebug settings of %s (%s → %s)", name, godebugText(og), godebugText(ng)))
	}
	if len(changed) == 0 {
		return nil, ""
	}
	// The run's go.mod with the old settings back.
	if of.Go != nil {
		if err := nf.AddGoStmt(of.Go.Version); err != nil {
			return changed, ""
		}
	} else if nf.Go != nil {
		nf.DropGoStmt()
	}
	for k := range ng {
		nf.DropGodebug(k)
	}
	for _, k := range slices.Sorted(maps.Keys(og)) {
		if err := nf.AddGodebug(k, og[k]); err != nil {
			return changed, ""
		}
	}
	nf.Cleanup()
	return changed, string(modfile.Format(nf.Syntax))
}

// goLine is a go.mod's language version; without a go line the go
// command assumes go 1.16.
func goLine(f *modfile.File) string {
	if f.Go == nil {
		return "1.16"
	}
	return f.Go.Version
}

func goLineText(f *modfile.File) string {
	if f.Go == nil {
		return "none (1.16)"
	}
	return f.Go.Version
}

func godebugs(f *modfile.File) map[string]string {
	m := map[string]string{}
	for _, g := range f.Godebug {
		m[g.Key] = g.Value
	}
	return m
}

func godebugText(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

// A //go:debug directive in a main package's code sets the run-time
// defaults of that package's test binary too (panicnil=1 makes a test's
// recover() see nothing), so the directives of code files are test
// configuration as go.mod's godebug lines are.

// GoDebugLines are the //go:debug directives of a Go file, as written.
func GoDebugLines(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "//go:debug") {
			out = append(out, t)
		}
	}
	return out
}

// WithGoDebug is src with its //go:debug directives replaced by lines
// (at its top, where directives may stand).
func WithGoDebug(src string, lines []string) string {
	var kept []string
	for _, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "//go:debug") {
			kept = append(kept, l)
		}
	}
	body := strings.Join(kept, "\n")
	if len(lines) == 0 {
		return body
	}
	return strings.Join(lines, "\n") + "\n" + body
}
