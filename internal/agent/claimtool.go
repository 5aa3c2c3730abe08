package agent

// The claim tool of a parallel run's workers: before a worker edits, it
// claims the files (and where it can say, the lines or symbols) it will
// change. The claims live in the store (store.TakeClaims checks and
// records them in one transaction); write and edit refuse a file the
// worker has not claimed (LayerClaims, the early, readable refusal), and
// the run refuses to land a commit that changes what its worker did not
// hold (integrate.go, the rule).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/claim"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// LayerClaims refuses a worker's write or edit of a file it has not
// claimed.
const LayerClaims = "claims"

// claimWait bounds how long a claim waits for another worker's.
const claimWait = 15 * time.Minute

// maxHeldFiles bounds how many files one worker holds at once: a worker
// that claimed everything would make every other one wait on it.
const maxHeldFiles = 100

var claimSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"claims":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer"},"end_line":{"type":"integer"},"symbol":{"type":"string","description":"a Go function, method (Type.Method), type, var or const"}},"required":["path"]}},` +
	`"reason":{"type":"string"},` +
	`"wait":{"type":"boolean","description":"wait until an overlapping claim is released (default true)"}},` +
	`"required":["claims","reason"],"additionalProperties":false}`)

func (r *runner) claimTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: "claim", Parameters: claimSchema,
			Description: "Claim the files you will change (lines or a symbol where you can say; the whole file otherwise) before you edit them; other workers change other files at once. Held until your goal lands. A claim overlapping another worker's waits for it, or is refused naming the holder."},
		run: r.runClaim,
	}
}

type claimArgs struct {
	Claims []struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
		Symbol    string `json:"symbol"`
	} `json:"claims"`
	Reason string `json:"reason"`
	Wait   *bool  `json:"wait"`
}

func (r *runner) runClaim(ctx context.Context, args json.RawMessage) tool.Result {
	w := r.worker()
	if w == nil {
		return tool.Result{IsError: true, Output: "claim is for the workers of a parallel run"}
	}
	var a claimArgs
	if err := strictDecode(args, &a); err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: "invalid arguments for claim: " + err.Error()}
	}
	want, notes, err := r.claimsOf(a)
	if err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: err.Error()}
	}
	held, err := r.o.Store.WorkerClaims(ctx, r.row.ID)
	if err != nil {
		return tool.Result{IsError: true, Output: "ultra could not read your claims: " + err.Error()}
	}
	if n := heldFiles(held, want); n > maxHeldFiles {
		return r.refuseClaim(fmt.Sprintf("these claims would have you hold %d files, and a worker holds at most %d at once: "+
			"other workers wait on what you hold. Claim only the files your goal changes, as you come to them; "+
			"a goal that must change more files at once is too big for one worker: say so, and a person can split it", n, maxHeldFiles))
	}
	waited := ""
	deadline := time.Now().Add(claimWait)
	retried := false
	for {
		conflicts, err := r.o.Store.TakeClaims(ctx, want, r.o.Now())
		if err != nil {
			return tool.Result{IsError: true, Output: "ultra could not record the claims: " + err.Error()}
		}
		if len(conflicts) == 0 {
			break
		}
		holders := claim.Holders(conflicts)
		why := claimConflicts(conflicts)
		gone := r.o.coord.notWorking(holders)
		if spent, out := r.o.pool.exhaustedBy(); out {
			return tool.Result{IsError: true, Output: "not claimed: " + spent}
		}
		switch {
		case len(gone) > 0 && !retried:
			// The run releases what a worker that ended will never land
			// before it counts it as ended: taken again, those are free.
			retried = true
			continue
		case len(gone) > 0:
			return r.refuseClaim(fmt.Sprintf("%s; worker %s stopped without landing its goal, so its claims stay until a person resumes the run: work on something else", why, strings.Join(gone, ", ")))
		case a.Wait != nil && !*a.Wait:
			return r.refuseClaim(why + ". Work on something else, or claim again with wait: true to wait until it lands.")
		case r.o.coord == nil:
			return r.refuseClaim(why + ": no process of the run lands goals now, so waiting could not end")
		case time.Now().After(deadline):
			return r.refuseClaim(fmt.Sprintf("%s, still after waiting %s", why, claimWait))
		}
		if cycle := r.o.coord.waitFor(r.row.ID, holders); cycle != nil {
			return r.refuseClaim(fmt.Sprintf("%s, and waiting could never end: the workers wait for each other (%s). Claim what you can now, and land your goal first", why, strings.Join(cycle, " → ")))
		}
		waited = why
		r.ctl.setActivity("waiting for claims held by " + strings.Join(holders, ", "))
		stop := r.pauseFor(ctx, time.Second)
		r.o.coord.waited(r.row.ID)
		r.ctl.setActivity("")
		if stop != "" {
			return tool.Result{IsError: true, Output: "not claimed: " + stop}
		}
	}
	var b strings.Builder
	if waited != "" {
		fmt.Fprintf(&b, "Waited: %s.\n", waited)
	}
	fmt.Fprintf(&b, "Claimed: %s (held until your goal lands on the run's branch).", claimList(want))
	for _, n := range notes {
		b.WriteString("\n" + n)
	}
	// What landed since the worker started may have changed what it
	// claims now: its work moves onto the run's branch first.
	if moved := r.followRun(ctx, want); moved != "" {
		b.WriteString("\n" + moved)
	}
	r.noteClaims(ctx)
	return tool.Result{Output: b.String()}
}

// claimsOf turns the claim tool's arguments into claims, resolving
// symbols to lines where ultra can (notes say where it could not).
func (r *runner) claimsOf(a claimArgs) ([]claim.Claim, []string, error) {
	if len(a.Claims) == 0 {
		return nil, nil, fmt.Errorf("claims is empty: name at least one file")
	}
	if len(a.Claims) > 100 {
		return nil, nil, fmt.Errorf("at most 100 claims at once, got %d", len(a.Claims))
	}
	w := r.worker()
	var out []claim.Claim
	var notes []string
	for i, c := range a.Claims {
		p, err := claim.Normalize(c.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("claims[%d].path: %v", i, err)
		}
		cl := claim.Claim{Run: w.Run, Worker: r.row.ID, Goal: w.Goal, Path: p, Reason: oneLine(a.Reason, 300)}
		switch {
		case c.Symbol != "" && (c.StartLine != 0 || c.EndLine != 0):
			return nil, nil, fmt.Errorf("claims[%d]: give lines or a symbol, not both", i)
		case c.Symbol != "":
			src, _ := r.readClaimed(p)
			if s, e, ok := claim.SymbolLines(p, src, c.Symbol); ok {
				cl.Start, cl.End, cl.Symbol = s, e, c.Symbol
			} else {
				notes = append(notes, fmt.Sprintf("ultra could not find %s in %s, so the claim holds the whole file", c.Symbol, p))
			}
		case c.StartLine != 0 || c.EndLine != 0:
			if c.StartLine < 1 || c.EndLine < c.StartLine {
				return nil, nil, fmt.Errorf("claims[%d]: lines %d-%d: give 1 <= start_line <= end_line", i, c.StartLine, c.EndLine)
			}
			cl.Start, cl.End = c.StartLine, c.EndLine
		}
		out = append(out, cl)
	}
	return out, notes, nil
}

// heldFiles is how many files a worker holding held would hold with
// want too.
func heldFiles(held, want []claim.Claim) int {
	files := map[string]bool{}
	for _, c := range append(slices.Clone(held), want...) {
		files[c.Path] = true
	}
	return len(files)
}

// readClaimed reads a file of the worker's tree, never through a link.
func (r *runner) readClaimed(p string) ([]byte, error) {
	root, err := os.OpenRoot(r.row.Workdir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(p))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > 4<<20 {
		return nil, fmt.Errorf("not read")
	}
	b := make([]byte, fi.Size())
	_, err = f.Read(b)
	return b, err
}

func (r *runner) refuseClaim(why string) tool.Result {
	return r.refuse(llm.ToolCall{ID: r.callID, Name: "claim"}, &refusal{layer: LayerClaims, reason: why})
}

func claimConflicts(cs []claim.Conflict) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

func claimList(cs []claim.Claim) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// pauseFor waits d, or less when a person's pause, stop or cancel of the
// worker comes (returned, for the model: the run's safe point takes it)
// or ctx ends.
func (r *runner) pauseFor(ctx context.Context, d time.Duration) string {
	select {
	case <-ctx.Done():
		return "interrupted"
	case <-time.After(d):
	}
	qs, _ := r.o.Store.OpenRequests(ctx, r.row.ID)
	for _, q := range qs {
		switch q.Kind {
		case store.ReqPause, store.ReqStop, store.ReqCancel:
			return "a person's " + q.Kind + " of the run came while it waited"
		}
	}
	return ""
}

// followRun moves the worker's work onto the run's branch when what it
// now claims changed there since the worker started (another goal
// landed with it): the worker edits the file as it is now.
func (r *runner) followRun(ctx context.Context, claimed []claim.Claim) string {
	ws := r.row.Workspace
	tip := workspace.BranchTip(ctx, r.row.Workdir, ws.Base)
	if tip == "" || tip == ws.From() {
		return ""
	}
	var paths []string
	for _, c := range claimed {
		paths = append(paths, c.Path)
	}
	out, err := workspace.Git(ctx, r.row.Workdir, append([]string{"diff", "--name-only", ws.From(), tip, "--"}, paths...)...)
	if err != nil || strings.TrimSpace(out) == "" {
		return ""
	}
	moved, err := r.refork(ctx, tip)
	if err != nil {
		return "ultra could not move your work onto the run's branch: " + err.Error()
	}
	return fmt.Sprintf("What you claim changed on the run's branch since you started (%s). %s", strings.Join(strings.Fields(out), ", "), moved)
}

// noteClaims puts the worker's claims on its task row.
func (r *runner) noteClaims(ctx context.Context) {
	held, err := r.o.Store.WorkerClaims(ctx, r.row.ID)
	if err != nil {
		return
	}
	r.claimText = oneLine(claimList(held), 500)
}

// checkClaimed refuses a worker's write or edit of a file it holds no
// claim on (a write that replaces a file it holds only lines of, too).
func (r *runner) checkClaimed(c llm.ToolCall) *refusal {
	var a struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal([]byte(c.Arguments), &a) != nil || strings.TrimSpace(a.FilePath) == "" {
		return nil // the tool reports the broken argument
	}
	p := a.FilePath
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(r.row.Workdir, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil // outside the worktree: the tools' own guards refuse it
		}
		p = rel
	}
	p, err := claim.Normalize(filepath.ToSlash(p))
	if err != nil {
		return nil
	}
	held, err := r.o.Store.WorkerClaims(context.Background(), r.row.ID)
	if err != nil {
		return &refusal{layer: LayerClaims, reason: "ultra could not read your claims: " + err.Error()}
	}
	whole, some := false, false
	for _, h := range held {
		if h.Path == p {
			some, whole = true, whole || h.Whole()
		}
	}
	switch {
	case !some:
		return &refusal{layer: LayerClaims, reason: fmt.Sprintf("%s is not claimed: claim it first (claim{claims:[{path:%q}], reason}), with its lines or symbol where you can say; other workers change other files at the same time", p, p)}
	case c.Name == "write" && !whole:
		if _, err := r.readClaimed(p); err == nil {
			return &refusal{layer: LayerClaims, reason: fmt.Sprintf("write replaces all of %s, and you claimed only lines of it: use edit within your lines, or claim the whole file", p)}
		}
	}
	return nil
}
