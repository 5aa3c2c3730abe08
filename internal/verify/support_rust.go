package verify

import (
	"path"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// rustSupport marks the crates only tests build: path dependencies under
// [dev-dependencies] (and a target's dev-dependencies), and [patch.*]
// path entries, which replace a crate for every build, the tests'
// included. A path that is also a plain dependency is code.
func (t *supportTree) rustSupport() {
	dev := map[string]string{} // directory → why
	code := map[string]bool{}
	for _, p := range sortedKeys(t.files) {
		if path.Base(p) != "Cargo.toml" {
			continue
		}
		var doc map[string]any
		if _, err := toml.Decode(t.content(p), &doc); err != nil {
			continue
		}
		dir := pathDir(p)
		add := func(deps any, into func(d string)) {
			m, _ := deps.(map[string]any)
			for _, name := range sortedKeys(m) {
				spec, _ := m[name].(map[string]any)
				if s, ok := spec["path"].(string); ok {
					if d, ok := pathJoin(dir, s); ok && d != "" {
						into(d)
					}
				}
			}
		}
		tables := []map[string]any{doc}
		if targets, ok := doc["target"].(map[string]any); ok {
			for _, k := range sortedKeys(targets) {
				if m, ok := targets[k].(map[string]any); ok {
					tables = append(tables, m)
				}
			}
		}
		for _, tbl := range tables {
			for _, key := range []string{"dev-dependencies", "dev_dependencies"} {
				add(tbl[key], func(d string) {
					if _, ok := dev[d]; !ok {
						dev[d] = "Rust dev-dependency (path in " + p + ")"
					}
				})
			}
			for _, key := range []string{"dependencies", "build-dependencies", "build_dependencies"} {
				add(tbl[key], func(d string) { code[d] = true })
			}
		}
		if patch, ok := doc["patch"].(map[string]any); ok {
			for _, reg := range sortedKeys(patch) {
				add(patch[reg], func(d string) { dev[d] = "Rust [patch." + reg + "] path (" + p + ")" })
			}
		}
	}
	dirs := sortedKeys(dev)
	sort.Strings(dirs)
	for _, d := range dirs {
		if code[d] && !strings.HasPrefix(dev[d], "Rust [patch") {
			continue
		}
		for _, f := range t.under(d) {
			t.support(f, dev[d])
		}
	}
}
