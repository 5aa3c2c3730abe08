package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// The gate cache: a full verification of a tree is kept in the
// repository's state (.ultra/state/gate-cache, hidden from every sandbox,
// each record signed with the gate key) under a key made of the tree and
// of everything else that decides what its tests do (cacheKey). A tree
// already measured with the same key, by this run or another (a base that
// many runs start from, a tree the model returns to), is not run again:
// the recorded evidence is judged afresh against this run's baseline and
// history. Only complete measurements are kept: none that timed out, was
// canceled, or could not start its runner.

// cacheSchema changes when what a record holds or means changes: older
// records are then never found.
const cacheSchema = 1

// cachedRun is one full verification of a tree.
type cachedRun struct {
	Schema  int            `json:"schema_version"`
	Key     string         `json:"key"`
	Tree    string         `json:"tree"`
	Run     string         `json:"run"`  // the run that measured it
	From    string         `json:"from"` // "baseline" or "decision N"
	Time    time.Time      `json:"time"`
	Sandbox string         `json:"sandbox,omitempty"`
	Fakes   []string       `json:"fakes,omitempty"`
	Result  *verify.Result `json:"result"`
}

func (c cachedRun) String() string {
	return fmt.Sprintf("tree %s already tested (%s of run %s, %s)", workspace.Short(c.Tree), c.From, c.Run, c.Time.Format(time.RFC3339))
}

// cacheProgs are the programs whose installation, when it changes, may
// change what a project's tests do (or which runner detection picks).
var cacheProgs = []string{
	"go", "python3", "python", "pytest", "pytest-3", "py.test", "uv", "poetry",
	"node", "npm", "npx", "yarn", "pnpm", "bun", "corepack", "deno",
	"cargo", "rustc", "cargo-nextest", "mvn", "gradle", "java", "cmake", "ctest", "make", "bwrap",
}

// cacheEnv are the variables that change what runs inside the gate.
var cacheEnv = []string{
	"PATH", "GOFLAGS", "GOTOOLCHAIN", "GOEXPERIMENT", "CGO_ENABLED", "GOARCH", "GOOS",
	"PYTHONPATH", "VIRTUAL_ENV", "NODE_OPTIONS", "NODE_PATH", "JAVA_HOME", "RUSTFLAGS", "RUSTUP_TOOLCHAIN", "CARGO_HOME", "MAVEN_OPTS",
}

// cacheKey is the key of a full verification of tree in workdir's
// repository as req describes it, "" when results are not cached (off in
// the configuration, no tree, or a selection rather than the suite).
func (o Options) cacheKey(workdir string, deps []string, tree string, req verify.Request) string {
	if o.NoGateCache {
		return ""
	}
	return o.inputsKey(workdir, deps, tree, req)
}

// inputsKey is cacheKey whether the gate cache is on or not: what a full
// verification of tree depends on, "" when it cannot be told.
func (o Options) inputsKey(workdir string, deps []string, tree string, req verify.Request) string {
	if o.StateRoot == "" || tree == "" || len(req.Only) > 0 {
		return ""
	}
	// ultra's own records of a run (goals.json, the ledger, the brief)
	// change with every step of every run and decide nothing about the
	// tests: the key is the tree without them.
	code, err := workspace.WithoutPaths(context.Background(), workdir, tree, goalArtifacts)
	if err != nil {
		return ""
	}
	h := sha256.New()
	line := func(format string, a ...any) { fmt.Fprintf(h, format+"\n", a...) }
	line("schema %d", cacheSchema)
	line("tree %s", code)
	cmds, _ := json.Marshal(req.Commands)
	line("commands %s", cmds)
	st := o.sandboxStatus()
	line("sandbox %t %s unix-sockets=%t", st.Available, st.Summary(), o.GateUnixSockets)
	if o.Ultra != "" {
		line("ultra %s", fileStamp(o.Ultra))
	}
	if exe, err := os.Executable(); err == nil {
		line("self %s", fileStamp(exe))
	}
	for _, k := range cacheEnv {
		v, ok := os.LookupEnv(k)
		line("env %s %t %q", k, ok, v)
	}
	if goenv, err := goEnvFile(); err == nil {
		line("goenv %s", fileStamp(goenv))
	}
	for _, p := range cacheProgs {
		if path, err := exec.LookPath(p); err == nil {
			line("prog %s %s %s", p, path, fileStamp(path))
		}
	}
	for _, d := range deps {
		line("dep %s %s", d, depStamp(filepath.Join(workdir, filepath.FromSlash(d))))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fileStamp identifies a file's content cheaply: where it resolves, its
// size and modification time.
func fileStamp(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "missing"
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%s %d %d", real, fi.Size(), fi.ModTime().UnixNano())
}

// goEnvFile is the go command's env file (go env -w), as the go command
// finds it.
func goEnvFile() (string, error) {
	if p := os.Getenv("GOENV"); p != "" {
		return p, nil
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cfg, "go", "env"), nil
}

// depStampLimit bounds the entries a dependency directory's stamp looks at.
const depStampLimit = 4000

// depStamp identifies the state of a dependency directory (node_modules,
// .venv, …): the names, sizes and times of its entries two levels down,
// and of a virtualenv's site-packages (lib/pythonX.Y/site-packages).
// Installing, upgrading or removing a package changes one of them
// (package managers add, rename or replace directories).
func depStamp(dir string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", fileStamp(dir))
	n := 0
	var walk func(p, rel string, depth int)
	walk = func(p, rel string, depth int) {
		entries, err := os.ReadDir(p)
		if err != nil {
			return
		}
		for _, e := range entries {
			if n++; n > depStampLimit {
				return
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			r := path.Join(rel, e.Name())
			fmt.Fprintf(h, "%s %d %d %s\n", r, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
			if e.IsDir() && (depth < 2 || towardsSitePackages(r)) {
				walk(filepath.Join(p, e.Name()), r, depth+1)
			}
		}
	}
	walk(dir, "", 1)
	return hex.EncodeToString(h.Sum(nil))
}

// towardsSitePackages says whether rel (in a dependency directory) is on
// the way to a virtualenv's packages: lib, lib/pythonX.Y, or its
// site-packages itself.
func towardsSitePackages(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) == 0 || (parts[0] != "lib" && parts[0] != "lib64") {
		return false
	}
	switch len(parts) {
	case 1:
		return true
	case 2:
		return strings.HasPrefix(parts[1], "python") || strings.HasPrefix(parts[1], "pypy")
	case 3:
		return parts[2] == "site-packages"
	}
	return false
}

// cached returns the record of key, nil when there is none (or it does not
// verify: it is measured again and replaced).
func (o Options) cached(key string) *cachedRun {
	if key == "" {
		return nil
	}
	var c cachedRun
	ok, err := gatefile.ReadCache(gatefile.CacheDir(o.StateRoot), key, &c)
	if err != nil || !ok || c.Schema != cacheSchema || c.Key != key || c.Result == nil {
		return nil
	}
	// What the key cannot see (a system library upgraded, the kernel)
	// drifts: a measurement counts for GateCacheMaxAge, then is made again.
	if age := o.Now().Sub(c.Time); age > GateCacheMaxAge || age < -time.Hour {
		return nil
	}
	return &c
}

// remember records a full verification under key when it is complete.
func (o Options) remember(key string, c cachedRun) {
	if key == "" || !cacheable(c.Result) {
		return
	}
	c.Schema, c.Key = cacheSchema, key
	_ = gatefile.WriteCache(gatefile.CacheDir(o.StateRoot), key, c)
}

// cacheable says whether a result is the tests' own answer, which running
// them again would repeat: not one cut short by a timeout or cancellation,
// nor one whose runner could not start or ran nothing, nor a selection;
// and none with errors (tests that could not run, modules that could not
// be collected) or failures for want of resources, which the machine at
// that moment may have caused (a full disk, memory, processes) as well as
// the tree: those are measured again each time.
func cacheable(res *verify.Result) bool {
	if res == nil || res.Selected || len(res.Commands) == 0 || res.Errors > 0 {
		return false
	}
	for _, t := range res.Tests {
		// Even a failing test's own word for it: kept out, measured again.
		if t.Status != report.Passed && t.Status != report.Skipped && gate.RanOutOf(t.Message) {
			return false
		}
	}
	for _, c := range res.Commands {
		ran := c.Passed + c.Failed + c.Errors + c.Skipped
		if c.TimedOut || c.NotFound || c.Selected || c.Errors > 0 || (c.ExitCode != 0 && ran == 0) {
			return false
		}
	}
	return true
}

// GateCacheMaxAge is how long a gate cache record counts after its
// measurement; ultra gc removes older ones.
const GateCacheMaxAge = 30 * 24 * time.Hour

// PruneGateCache removes the records of the repository's gate cache
// written more than maxAge before now (for ultra gc); it returns how many
// it removed (or would remove, with dryRun).
func PruneGateCache(stateRoot string, maxAge time.Duration, now time.Time, dryRun bool) int {
	dir := gatefile.CacheDir(stateRoot)
	var old []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil && now.Sub(fi.ModTime()) > maxAge {
			old = append(old, p)
		}
		return nil
	})
	sort.Strings(old)
	if !dryRun {
		for _, p := range old {
			_ = os.Remove(p)
		}
	}
	return len(old)
}
