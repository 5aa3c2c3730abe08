package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/mcp"
)

// npmInstallTimeout bounds installing one server's npm package.
const npmInstallTimeout = 3 * time.Minute

// mcpPackages are the npm packages of servers that run through npx,
// installed by ultra before the servers start: the sandbox has no
// network to fetch them from under most profiles, and npx would wait on
// the registry until the start timed out.
type mcpPackages struct {
	mu  sync.Mutex
	got map[string]preparedServer // by server name
}

// preparedServer is a server as ultra starts it: its npx package's
// program run directly, and the package's directory the sandbox shows.
type preparedServer struct {
	s    mcp.Server
	show string
	err  error
}

// prepare installs the npx packages of servers (in parallel), outside
// the sandbox, with npm's install scripts off: no code of a package runs
// there. They are kept in the per-user state (mcp-packages/), for every
// repository's runs, or in stateRoot's when there is none.
func (p *mcpPackages) prepare(ctx context.Context, stateRoot string, servers []mcp.Server) {
	root := filepath.Join(stateRoot, "mcp-packages")
	if d, err := config.StateDir(); err == nil {
		root = filepath.Join(d, "mcp-packages")
	}
	var wg sync.WaitGroup
	got := map[string]preparedServer{}
	var mu sync.Mutex
	for _, s := range servers {
		pkg, ok := mcp.NPX(s)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps := preparedServer{s: s}
			dir, err := installPackage(ctx, root, pkg.Spec)
			if err == nil {
				ps.s.Command, ps.s.Args, err = packageProgram(dir, pkg)
				ps.show = dir
			}
			if err != nil {
				ps.err = fmt.Errorf("installing npm package %s for npx: %w", pkg.Spec, err)
			}
			mu.Lock()
			got[s.Name] = ps
			mu.Unlock()
		}()
	}
	wg.Wait()
	p.mu.Lock()
	p.got = got
	p.mu.Unlock()
}

// server is s as it starts, the directory to show it, or why it cannot.
func (p *mcpPackages) server(s mcp.Server) (mcp.Server, []string, error) {
	p.mu.Lock()
	ps, ok := p.got[s.Name]
	p.mu.Unlock()
	if !ok {
		return s, nil, nil
	}
	if ps.err != nil {
		return s, nil, ps.err
	}
	return ps.s, []string{ps.show}, nil
}

// packageFresh is how long an installed package whose spec names no
// exact version (latest, a range) is used before it is installed again,
// as npx would look for a newer one.
const packageFresh = 24 * time.Hour

// exactVersion matches a spec that pins one version (name@1.2.3).
var exactVersion = regexp.MustCompile(`.@v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// installPackage installs npm spec under root (a directory named by the
// spec's hash, kept for later runs: for good when the spec pins a
// version, else packageFresh) and is that directory.
func installPackage(ctx context.Context, root, spec string) (string, error) {
	sum := sha256.Sum256([]byte(spec))
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	if fi, err := os.Stat(filepath.Join(dir, ".ultra-installed")); err == nil {
		if exactVersion.MatchString(spec) || time.Since(fi.ModTime()) < packageFresh {
			return dir, nil
		}
		if fresh, err := installFresh(ctx, dir, spec); err == nil {
			return fresh, nil
		}
		return dir, nil // the registry is out of reach: the one installed
	}
	return installFresh(ctx, dir, spec)
}

// installFresh installs spec into dir, replacing what it held.
func installFresh(ctx context.Context, dir, spec string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed (install Node.js, or give the server's program by its path)")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".installing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, npmInstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--ignore-scripts", "--no-audit", "--no-fund",
		"--no-package-lock", "--loglevel=error", "--", spec)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("npm install did not end within %s", npmInstallTimeout)
		}
		return "", fmt.Errorf("npm install: %v: %s", err, clipText(strings.TrimSpace(out.String()), 600))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".ultra-installed"), []byte(spec+"\n"), 0o644); err != nil {
		return "", err
	}
	old := dir + ".old"
	os.RemoveAll(old)
	_ = os.Rename(dir, old) // a server of another run may still use it
	if err := os.Rename(tmp, dir); err != nil {
		if _, e := os.Stat(filepath.Join(dir, ".ultra-installed")); e == nil {
			return dir, nil // another run installed it meanwhile
		}
		return "", err
	}
	return dir, nil
}

// packageProgram is the command and arguments that run pkg's program as
// npx would, from its installation in dir.
func packageProgram(dir string, pkg mcp.Package) (string, []string, error) {
	pdir := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg.Name))
	b, err := os.ReadFile(filepath.Join(pdir, "package.json"))
	if err != nil {
		return "", nil, err
	}
	var meta struct {
		Bin any `json:"bin"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", nil, fmt.Errorf("%s/package.json: %v", pkg.Name, err)
	}
	rel, ok := mcp.BinOf(pkg.Name, pkg.Bin, meta.Bin)
	if !ok {
		return "", nil, fmt.Errorf("package %s has no program npx would run (its package.json \"bin\": %v)", pkg.Name, meta.Bin)
	}
	prog := filepath.Join(pdir, filepath.FromSlash(rel))
	if !strings.HasPrefix(prog, pdir+string(filepath.Separator)) {
		return "", nil, fmt.Errorf("package %s: its program %q lies outside it", pkg.Name, rel)
	}
	// A program whose first line names another interpreter runs itself;
	// a JavaScript file runs with node, as its link would.
	if head, err := os.ReadFile(prog); err == nil && bytes.HasPrefix(head, []byte("#!")) {
		line, _, _ := bytes.Cut(head, []byte("\n"))
		if !bytes.Contains(line, []byte("node")) {
			return prog, pkg.Args, nil
		}
	}
	return "node", append([]string{prog}, pkg.Args...), nil
}
