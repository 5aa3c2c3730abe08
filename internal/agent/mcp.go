package agent

// The tools of the person's MCP servers (package mcp), held inside the
// run's rules: offered by the phase table's MCP classes (every tool where
// the phase changes code, the read-only ones where it reads), guarded,
// approved and redacted like ultra's own, the stdio servers contained in
// a sandbox of their own whose work tree is read-only unless the phase
// writes.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/mcp"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/rules"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tool"
)

// mcpState is a run's MCP servers: started with the runner, their tools
// registered once they answered (mcpWait).
type mcpState struct {
	m          *mcp.Manager
	ready      chan struct{}
	registered bool
	// specBytes are the tools' specs' sizes as requests carry them,
	// measured once (mcpOfferedNow asks at every request).
	specBytes map[string]int
	// pkgs are the npx servers' packages, installed before they start.
	pkgs mcpPackages
}

// startMCP starts the configured servers in the background; the first
// request waits for them.
func (r *runner) startMCP(ctx context.Context) {
	if len(r.o.MCP) == 0 {
		return
	}
	for _, s := range r.o.MCP {
		for k, v := range s.Env {
			if proc.IsSecret(k) {
				r.secrets = append(r.secrets, secretValues([]string{v})...)
			}
		}
		for _, v := range s.Headers {
			r.secrets = append(r.secrets, secretValues([]string{v})...)
		}
	}
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	r.mcp.m = mcp.NewManager(r.o.MCP, mcp.Options{
		Launch:  r.mcpLaunch,
		Network: func() bool { p, _ := policy.ProfileOf(r.row.Axes.Permission); return p.Network },
		Roots:   []string{r.row.Workdir},
		LogDir:  filepath.Join(runDir, "mcp"),
		Version: r.o.Version,
	})
	r.mcp.ready = make(chan struct{})
	writable := r.mcpWritable()
	go func() {
		defer close(r.mcp.ready)
		r.mcp.pkgs.prepare(ctx, r.o.StateRoot, r.o.MCP)
		r.mcp.m.Start(ctx, writable)
	}()
}

// mcpWait waits for the servers to have started and registers their
// tools (once, on the run's goroutine).
func (r *runner) mcpWait() {
	if r.mcp.m == nil || r.mcp.registered {
		return
	}
	<-r.mcp.ready
	r.mcp.registered = true
	var servers []event.MCPServerData
	for _, st := range r.mcp.m.Statuses() {
		servers = append(servers, event.MCPServerData{Name: st.Name, State: st.State, Error: st.Error, Tools: st.Tools})
	}
	r.emit(event.MCP, event.MCPData{Servers: servers})
	for _, st := range r.mcp.m.Statuses() {
		if st.State != "connected" {
			r.emit(event.Warning, event.WarningData{Message: fmt.Sprintf("MCP server %s (%s) is not used: %s", st.Name, st.Source, st.Error)})
		}
	}
	for _, w := range MCPStrays(r.o.MCP, r.o.Rules, r.mcp.m.Offered()) {
		r.emit(event.Warning, event.WarningData{Message: w})
	}
	for _, ti := range r.mcp.m.Tools() {
		r.tools[ti.Name] = mcpTool{r: r, info: ti}
		r.order = append(r.order, ti.Name)
	}
	r.tools[mcpSearchName] = r.mcpSearchTool()
}

// closeMCP ends the servers' sessions and kills what they started; a
// later call starts its server again (a profile changed meanwhile).
func (r *runner) closeMCP() {
	if r.mcp.m != nil {
		if r.mcp.ready != nil {
			<-r.mcp.ready
		}
		r.mcp.m.Close()
	}
}

// mcpWritable says whether the servers may write the run's tree now.
func (r *runner) mcpWritable() bool {
	p, _ := policy.ProfileOf(r.row.Axes.Permission)
	return p.WriteWork && phase.Worktree(r.row.Axes.Mode) && phase.MCPWritableIn(r.st.Phase.Mode, r.st.Phase.Phase)
}

// mcpLaunch makes a stdio server's process: in a sandbox of the run's
// layout with a home and /tmp of the server's own, the work tree
// writable only when writable, the network as the profile says, working
// in the project view (projectView); its
// environment is the model's commands' (no credentials) with the
// server's own env on top, which the person configured for it.
func (r *runner) mcpLaunch(s mcp.Server, writable bool) (*exec.Cmd, func(), error) {
	own := filepath.Join(RunDir(r.o.StateRoot, r.row.ID), "mcp", s.Name)
	for _, d := range []string{filepath.Join(own, "home"), filepath.Join(own, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, err
		}
	}
	// The server starts in the project view, never in the worktree: a
	// relative program, npx's local packages and a server's own files
	// are the person's, not files the model wrote. The worktree is its
	// root.
	view, err := r.projectView(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("checking out the project for MCP server %s: %w", s.Name, err)
	}
	s, shown, err := r.mcp.pkgs.server(s)
	if err != nil {
		return nil, nil, err
	}
	if view != r.row.Workdir {
		shown = append(shown, view)
	}
	sb, err := runSandbox(context.Background(), r.o, r.row, r.st.DepDirs, !writable, own, shown...)
	if err != nil {
		return nil, nil, err
	}
	// No sandbox: the run was allowed to start without one (its bash
	// commands run as they are too).
	return serverCommand(sb, s, view)
}

// serverCommand is stdio server s's process in sb, working in dir: the
// environment of the model's commands (no credentials) in the sandbox,
// with the server's own env on top, which the person configured for it.
func serverCommand(sb *proc.Sandbox, s mcp.Server, dir string) (*exec.Cmd, func(), error) {
	cmd, done, err := sb.Command(s.Command, s.Args, dir, proc.Environ())
	if err != nil {
		return nil, nil, err
	}
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd, done, nil
}

// phaseAllows says the current phase offers tool name: an MCP tool by
// its class (mcp.ToolInfo.ReadOnly), any other by name.
func (r *runner) phaseAllows(name string) bool {
	if name == mcpSearchName {
		return r.mcpClass() != ""
	}
	if mcp.IsTool(name) {
		t, ok := r.tools[name].(mcpTool)
		return ok && phase.AllowsMCPIn(r.st.Phase.Mode, r.st.Phase.Phase, t.info.ReadOnly)
	}
	return r.st.Phase.Allows(name)
}

// mcpOffered expands a phase table's MCP class into the servers' tools
// the person's policy does not deny, in the servers' order.
func (r *runner) mcpOffered(class string) []string {
	var out []string
	for _, name := range r.order {
		t, ok := r.tools[name].(mcpTool)
		if !ok || t.info.Policy == mcp.Deny || r.o.Rules.Decide(rules.Call{Tool: name}).Kind == rules.Deny ||
			(class == phase.MCPRead && !t.info.ReadOnly) || r.narrowed(name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// mcpDenied says the person's configuration (a server's policy, or a
// permission rule) denies MCP tool name: it is never offered, and a call
// is refused by what denies it, loaded or not.
func (r *runner) mcpDenied(name string) *refusal {
	t, ok := r.tools[name].(mcpTool)
	if !ok {
		return nil
	}
	if d := r.o.Rules.Decide(rules.Call{Tool: name}); d.Kind == rules.Deny {
		return &refusal{layer: LayerRules, reason: fmt.Sprintf("your permission rule %s refuses this call (%s is never offered)", d.Rule.Describe(), name)}
	}
	if t.info.Policy != mcp.Deny {
		return nil
	}
	return &refusal{layer: LayerPolicy, reason: fmt.Sprintf("your configuration denies %s (tools.%s = \"deny\" of MCP server %s)", name, t.info.Tool, t.info.Server)}
}

// mcpPolicyAsks says the person's policy for MCP tool name is ask.
func (r *runner) mcpPolicyAsks(name string) bool {
	t, ok := r.tools[name].(mcpTool)
	return ok && t.info.Policy == mcp.Ask
}

// mcpDestructive says MCP tool name is marked destructive by its server
// and the person's policy says nothing of it: it waits for a person under
// every run control, unless an allow rule allows it.
func (r *runner) mcpDestructive(name string) bool {
	t, ok := r.tools[name].(mcpTool)
	return ok && t.info.Policy == "" && t.info.Destructive
}

// mcpToolOf is the server's own name of MCP tool name.
func mcpToolOf(name string) string {
	if i := strings.LastIndex(name, "__"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// mcpTool is one server's tool as the model sees it. It is never
// ReadOnly to the run (a server's hint is a claim): its calls run one at
// a time, are checked for what they changed, and start the tests ahead.
type mcpTool struct {
	r    *runner
	info mcp.ToolInfo
}

func (t mcpTool) Spec() llm.ToolSpec {
	desc := strings.TrimSpace(t.info.Description)
	if len(desc) > 1024 {
		desc = desc[:1024] + "…"
	}
	return llm.ToolSpec{Name: t.info.Name, Description: "[MCP server " + t.info.Server + "] " + desc, Parameters: t.info.Schema}
}

func (t mcpTool) ReadOnly() bool { return false }

func (t mcpTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	r := t.r
	res := r.mcp.m.Call(ctx, t.info.Name, args, r.mcpWritable())
	data := map[string]any{"server": t.info.Server, "tool": t.info.Tool}
	out := res.Text
	if len(res.Images) > 0 {
		dir := filepath.Join(RunDir(r.o.StateRoot, r.row.ID), "mcp", "content")
		var kept []map[string]any
		for i, b := range res.Images {
			sum := sha256.Sum256(b.Data)
			p := filepath.Join(dir, fmt.Sprintf("%s-%d%s", mcp.Clean(firstNonEmpty(r.callID, "call")), i+1, extFor(b.MIME)))
			if os.MkdirAll(dir, 0o755) == nil && os.WriteFile(p, b.Data, 0o644) == nil {
				kept = append(kept, map[string]any{"path": p, "mime": b.MIME, "sha256": hex.EncodeToString(sum[:]), "bytes": len(b.Data)})
			}
		}
		data["content"] = kept
	}
	return tool.Result{Output: out, IsError: res.IsError, Malformed: res.Malformed, Data: data}
}

func extFor(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	}
	return ".bin"
}

// MCPCheck connects servers as a read-only chat in dir would (stdio
// servers contained, the tree read-only, a home of their own under the
// repository's state), for ultra mcp and doctor. Remote servers are
// reached when network is set. The caller closes the manager.
func MCPCheck(ctx context.Context, o Options, dir string, servers []mcp.Server, network bool) (*mcp.Manager, func()) {
	own, err := os.MkdirTemp(o.StateRoot, "mcp-check-")
	if err != nil {
		own = filepath.Join(os.TempDir(), "ultra-mcp-check")
	}
	row := &store.Run{ID: filepath.Base(own), Workdir: dir}
	row.Axes.Mode, row.Axes.Permission = phase.Chat, "normal"
	var pkgs mcpPackages
	launch := func(s mcp.Server, _ bool) (*exec.Cmd, func(), error) {
		s, shown, err := pkgs.server(s)
		if err != nil {
			return nil, nil, err
		}
		sb, err := runSandbox(ctx, o, row, nil, true, filepath.Join(own, s.Name), shown...)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range []string{"home", "tmp"} {
			_ = os.MkdirAll(filepath.Join(own, s.Name, d), 0o700)
		}
		return serverCommand(sb, s, dir)
	}
	m := mcp.NewManager(servers, mcp.Options{Launch: launch, Network: func() bool { return network }, Roots: []string{dir},
		LogDir: filepath.Join(own, "logs"), Version: o.Version})
	pkgs.prepare(ctx, o.StateRoot, servers)
	m.Start(ctx, false)
	return m, func() { m.Close(); os.RemoveAll(own) }
}

// mcpDirectBytes bounds what the MCP tools' definitions may add to every
// request (their names, descriptions and schemas, as JSON): above it, a
// phase offers mcp_search, which loads the tools the model asks for.
const mcpDirectBytes = 12000

// mcpSearchName is the tool that finds and loads MCP tools.
const mcpSearchName = "mcp_search"

// mcpOfferedNow is what a phase's MCP class offers in this request: every
// tool of the class when their definitions fit mcpDirectBytes, else
// mcp_search and the tools it loaded.
func (r *runner) mcpOfferedNow(class string) []string {
	all := r.mcpOffered(class)
	if mcpSpecBytes(r, all) <= mcpDirectBytes {
		return all
	}
	out := []string{mcpSearchName}
	for _, name := range all {
		if slices.Contains(r.st.MCPLoaded, name) {
			out = append(out, name)
		}
	}
	return out
}

func mcpSpecBytes(r *runner, names []string) int {
	if r.mcp.specBytes == nil {
		r.mcp.specBytes = map[string]int{}
	}
	n := 0
	for _, name := range names {
		size, ok := r.mcp.specBytes[name]
		if !ok {
			b, _ := json.Marshal(r.tools[name].Spec())
			size = len(b)
			r.mcp.specBytes[name] = size
		}
		n += size
	}
	return n
}

// mcpClass is the MCP class the current phase offers ("" for none).
func (r *runner) mcpClass() string {
	for _, t := range r.st.Phase.Tools() {
		if t == phase.MCPAll || t == phase.MCPRead {
			return t
		}
	}
	return ""
}

var mcpSearchSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"query":{"type":"string","description":"Words of what you need (a server's name, what the tool does)"}},` +
	`"required":["query"],"additionalProperties":false}`)

// mcpSearchTool finds the MCP tools the phase allows that match a query
// and loads up to mcpSearchMax of them: offered from the next request on.
func (r *runner) mcpSearchTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: mcpSearchName, Parameters: mcpSearchSchema,
			Description: "Find the tools of the MCP servers by what they do, and load the best matches: they are offered from your next answer on (the servers bring too many to offer all at once)."},
		run: r.runMCPSearch,
	}
}

const mcpSearchMax = 5

func (r *runner) runMCPSearch(_ context.Context, args json.RawMessage) tool.Result {
	var a struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return tool.Result{IsError: true, Malformed: true, Output: `mcp_search needs a query: mcp_search{"query":"create an issue"}`}
	}
	words := strings.Fields(strings.ToLower(a.Query))
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, name := range r.mcpOffered(r.mcpClass()) {
		t := r.tools[name].(mcpTool)
		text := strings.ToLower(name + " " + t.info.Title + " " + t.info.Description)
		score := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{name, score})
		}
	}
	if len(hits) == 0 {
		return tool.Result{Output: fmt.Sprintf("no MCP tool this phase offers matches %q; the servers: %s", a.Query, strings.Join(r.mcpServerNames(), ", "))}
	}
	slices.SortStableFunc(hits, func(x, y hit) int { return y.score - x.score })
	hits = hits[:min(len(hits), mcpSearchMax)]
	var b strings.Builder
	b.WriteString("Loaded (offered from your next answer on):\n")
	for _, h := range hits {
		t := r.tools[h.name].(mcpTool)
		if !slices.Contains(r.st.MCPLoaded, h.name) {
			r.st.MCPLoaded = append(r.st.MCPLoaded, h.name)
		}
		fmt.Fprintf(&b, "- %s: %s\n", h.name, oneLine(t.info.Description, 160))
	}
	return tool.Result{Output: strings.TrimRight(b.String(), "\n")}
}

func (r *runner) mcpServerNames() []string {
	var out []string
	for _, s := range r.o.MCP {
		out = append(out, s.Name)
	}
	return out
}

// MCPStrays are the person's MCP policies and permission rules that name
// a server or a tool there is not (offered: the tools of the servers
// that answered; configured: every server's name, when servers are only
// some of them): each would apply to nothing.
func MCPStrays(servers []mcp.Server, set rules.Set, offered map[string][]string, configured ...string) []string {
	if len(configured) == 0 {
		for _, s := range servers {
			configured = append(configured, s.Name)
		}
	}
	return append(mcp.StrayPolicies(servers, offered), set.StrayMCP(configured, offered, mcp.Suggest)...)
}
