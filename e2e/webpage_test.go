package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ultra-dev/ultra/internal/check"
)

// browserFor starts a headless Chromium for the test (its own profile),
// or skips the test when there is none.
func browserFor(t *testing.T) context.Context {
	t.Helper()
	bin := check.FindChromium("")
	if bin == "" {
		t.Skip("chromium is not installed (apt-get install chromium): the web page's tests drive it")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its own sandbox as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting chromium: %v", err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// tab is one browser tab on the page of server s.
type tab struct {
	t   *testing.T
	ctx context.Context
	s   *server
}

// openTab opens a new tab of browser b at the page's address with the
// token ultra serve printed, and hash (a view: "#/run/ID").
func openTab(t *testing.T, b context.Context, s *server, hash string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b)
	t.Cleanup(cancel)
	// The tab's first action opens it: with no timeout, which would close it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	p := &tab{t: t, ctx: ctx, s: s}
	// Each tab opens with a one-time code of its own, as "Open in another
	// browser" gives one.
	_, c := s.call(t, "POST", "/api/codes", "")
	p.do(chromedp.Navigate(s.url + c["path"].(string) + hash))
	p.wait("the page started", `!document.getElementById("boot") && document.getElementById("conn").dataset.state === "live"`)
	return p
}

// do runs the actions on the tab.
func (p *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v\npage:\n%s", err, p.text())
	}
}

// eval is the value of the JavaScript expression js on the page.
func eval[T any](p *tab, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v\npage:\n%s", js, err, p.text())
	}
	return v
}

// text is what the page shows, for failure messages.
func (p *tab) text() string {
	ctx, cancel := context.WithTimeout(p.ctx, 3*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return s
}

// wait waits until the JavaScript condition cond holds on the page.
func (p *tab) wait(what, cond string) {
	p.t.Helper()
	p.waitFor(what, cond, 60*time.Second)
}

func (p *tab) waitFor(what, cond string, d time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(()=>{ try { return `+cond+` } catch (e) { return false } })()`))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("the page did not show %s within %s (%s)\npage:\n%s", what, d, cond, p.text())
}

// click presses the button sel as a person does (the first one shown).
func (p *tab) click(sel string) {
	p.t.Helper()
	p.wait(sel+" shown", `document.querySelector(`+strconv.Quote(sel)+`) && document.querySelector(`+strconv.Quote(sel)+`).offsetParent !== null`)
	p.do(chromedp.Click(chromedp.CSS(sel)))
}

// confirm presses the button sel that asks once more, then again to act.
// The second press must come within its 4 seconds: it is sent with the
// first's answer checked, at once, however slow the machine (two presses
// the harness sends one by one can fall either side of the 4 seconds).
func (p *tab) confirm(sel string) {
	p.t.Helper()
	p.click(sel)
	js := `(() => { const b = document.querySelector(` + strconv.Quote(sel) + `); if (!b.classList.contains("armed")) b.click();
		if (!b.classList.contains("armed")) return false; b.click(); return true })()`
	if !eval[bool](p, js) {
		p.t.Fatalf("%s did not ask once more", sel)
	}
}

// seqs are the seqs of the events the transcript shows, sorted (a
// call's result is shown inside the call's card, so the page's order is
// not the stream's); an event shown twice is there twice.
func (p *tab) seqs() []int {
	s := eval[[]int](p, `[...document.querySelectorAll("#transcript [data-seq]")].map(e => Number(e.dataset.seq))`)
	slices.Sort(s)
	return s
}

// shot writes a screenshot of what the window shows to dir/name.png and
// checks it is a PNG.
func (p *tab) shot(dir, name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	must(p.t, err)
	if len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		p.t.Fatalf("screenshot %s: %d bytes, not a PNG", name, len(b))
	}
	must(p.t, os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644))
}

// runFromHash waits until the page shows a run and returns its id.
func (p *tab) runFromHash() string {
	p.t.Helper()
	p.wait("a run's view", `location.hash.startsWith("#/run/") && document.querySelector("article.run")`)
	h := eval[string](p, `location.hash`)
	return strings.Split(strings.TrimPrefix(h, "#/run/"), "/")[0]
}

// storeSeqs are the seqs of every event of run id, read from the API's
// stream of the run up to its end (or the latest at the time).
func storeSeqs(t *testing.T, s *server, id string, until string) []int {
	t.Helper()
	r := &server{url: s.url, token: s.token}
	stop := r.follow(t, "/api/runs/"+id+"/events", "")
	r.waitEvent(t, until+" on the run's stream", 30*time.Second, func(e map[string]any) bool { return e["type"] == until })
	time.Sleep(200 * time.Millisecond)
	stop()
	_, ids := r.events()
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i], _ = strconv.Atoi(id)
	}
	return out
}

// A run started from the page's form, pointed at the scripted model by
// its flags, runs to its end and the page shows it complete; its diff is
// shown, and it lands from the page. The token leaves the address bar.
func TestWebPageStartsARun(t *testing.T) {
	t.Parallel()
	b := browserFor(t)
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	steps := fixSteps()
	// The Anthropic wire, whose answers carry readable thinking.
	steps[0]["text"], steps[0]["thinking"] = "Reading calc.go first.", "Add looks wrong, so I read it before changing anything."
	m := newModel(t, steps...)
	// Without the token the page says where it comes from and takes one
	// pasted; a wrong one is refused.
	bare, cancel := chromedp.NewContext(b)
	defer cancel()
	must(t, chromedp.Do(bare))
	q := &tab{t: t, ctx: bare, s: s}
	q.do(chromedp.Navigate(s.url + "/"))
	q.wait("the token asked for", `document.querySelector(".ask-token") && document.activeElement.id === "token"`)
	q.do(chromedp.SendKeys(chromedp.ID("token"), strings.Repeat("0", 64)+kb.Enter))
	q.wait("the wrong token refused", `document.querySelector(".ask-token")?.textContent.includes("refused")`)
	q.do(chromedp.SendKeys(chromedp.ID("token"), s.token+kb.Enter))
	q.wait("the runs", `document.querySelector("#runs")?.dataset.loaded === "1" && document.getElementById("conn").dataset.state === "live"`)
	p := openTab(t, b, s, "")
	addr, kept := eval[string](p, `location.href`), eval[string](p, `sessionStorage.getItem("ultra.token")`)
	if strings.Contains(addr, "code=") || len(kept) != 64 || kept == s.token {
		t.Fatalf("the code and the token: address %q, kept %q", addr, kept)
	}
	// The address ultra serve printed opens one page; its code is spent
	// after, and a page opened with it again asks for a token.
	first, cancel1 := chromedp.NewContext(b)
	defer cancel1()
	must(t, chromedp.Do(first))
	f := &tab{t: t, ctx: first, s: s}
	f.do(chromedp.Navigate(s.url + "/?code=" + s.code))
	f.wait("the printed address opens the page", `document.querySelector("#runs")?.dataset.loaded === "1"`)
	again, cancel2 := chromedp.NewContext(b)
	defer cancel2()
	must(t, chromedp.Do(again))
	g := &tab{t: t, ctx: again, s: s}
	g.do(chromedp.Navigate(s.url + "/?code=" + s.code))
	g.wait("a spent code refused", `document.querySelector(".ask-token")?.textContent.includes("spent")`)
	p.click(`a[href="#/new"].button`)
	p.wait("the start form", `document.activeElement && document.activeElement.id === "new-task"`)
	p.do(chromedp.SendKeys(chromedp.ID("new-task"), "fix calc"),
		chromedp.SetValue(chromedp.ID("new-provider"), "anthropic"),
		chromedp.SetValue(chromedp.ID("new-base-url"), m.url),
		chromedp.SetValue(chromedp.ID("new-model"), "scripted"),
		// The button works from the keyboard.
		chromedp.Focus(chromedp.CSS("button.act-start")),
		chromedp.KeyEvent(kb.Enter))
	id := p.runFromHash()
	p.wait("the run complete", `document.querySelector('#transcript [data-type=run_finished] .chip')?.textContent === "complete"
		&& document.querySelector("article.run").dataset.status === "complete"`)
	if code, st := s.call(t, "GET", "/api/runs/"+id, ""); code != 200 || st["phase"] != "complete" || st["provider"] != "anthropic" || st["model"] != "scripted" {
		t.Fatalf("the run the page started: %d %v", code, st)
	}
	// The model's text is shown, its thinking folded; the edit as a diff.
	p.wait("the text with its thinking folded", `(() => {
		const say = document.querySelector("#transcript [data-type=assistant_text]");
		const th = say && say.querySelector("details.thinking");
		return say.textContent.includes("Reading calc.go first.") && th && !th.open && th.textContent.includes("Add looks wrong")
	})()`)
	p.wait("the edit's diff", `[...document.querySelectorAll("#transcript [data-type=tool_result] .dl-add")].some(e => e.textContent.includes("return a + b"))`)
	p.click(`#tab-diff`)
	p.wait("the diff", `[...document.querySelectorAll("#panel-diff .dl-add")].some(e => e.textContent.includes("return a + b"))`)
	p.click(`button.act-land`)
	p.wait("land asking to confirm", `document.querySelector("button.act-land").classList.contains("armed")`)
	p.click(`button.act-land`)
	p.wait("land done", `[...document.querySelectorAll(".notice")].some(n => n.textContent.includes("/land done"))`)
	if got := readFile(t, filepath.Join(dir, "calc", "calc.go")); !strings.Contains(got, "return a + b") {
		t.Fatalf("after landing from the page the checkout has:\n%s", got)
	}
}

// A call a manual run waits on is allowed on the page, from the keyboard:
// the call runs (the stream says allowed, then the read's result), the
// page shows it, and the run is cancelled from the page.
func TestWebPageApproval(t *testing.T) {
	t.Parallel()
	b := browserFor(t)
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	s.follow(t, "/api/events", "")
	// The model is still answering when the page cancels, however slow
	// the machine: the run never runs out of script first.
	m := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})), step{"text": "waiting", "delay_ms": 120000})
	code, v := s.call(t, "POST", "/api/runs", `{"task": "look at calc", "flags": {"control": "manual", `+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	id := v["run"].(string)
	p := openTab(t, b, s, "#/run/"+id)
	p.wait("the call waiting", `document.querySelector(".wait-box:not([hidden]) [data-call] button.act-allow")`)
	// Its line in the transcript says it waits, not that it runs.
	p.wait("the call's line waiting", `[...document.querySelectorAll("#transcript details.call .call-state")].some(s => s.textContent.includes("waits for you"))`)
	evs, _ := s.events()
	for _, e := range evs {
		if e["type"] == "approval" && data(e)["state"] != "waiting" {
			t.Fatalf("answered before the page did: %v", e)
		}
	}
	// From the keyboard alone: Tab reaches Allow before the run's other
	// controls, shows where the focus is, and Enter presses it.
	var order []string
	for len(order) < 60 {
		p.do(chromedp.KeyEvent(kb.Tab))
		at := eval[string](p, `(e => e.tagName + "." + e.className)(document.activeElement)`)
		order = append(order, at)
		if strings.Contains(at, "act-allow") && !strings.Contains(at, "act-allow-") {
			break
		}
	}
	if at := order[len(order)-1]; !strings.Contains(at, "act-allow") || slices.ContainsFunc(order, func(s string) bool { return strings.Contains(s, "act-next") }) {
		t.Fatalf("Tab went through %v", order)
	}
	if o := eval[string](p, `getComputedStyle(document.activeElement).outlineStyle`); o == "none" {
		t.Fatalf("the focused button shows no outline")
	}
	p.do(chromedp.KeyEvent(kb.Enter))
	s.waitEvent(t, "the approval", 20*time.Second, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "approval" && data(e)["state"] == "allowed" && data(e)["tool"] == "read"
	})
	res := s.waitEvent(t, "the read's result", 20*time.Second, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "tool_result" && data(e)["tool"] == "read"
	})
	if data(res)["is_error"] != false || !strings.Contains(fmt.Sprint(data(res)["output"]), "return a - b") {
		t.Fatalf("the allowed read: %v", data(res))
	}
	p.wait("the answer on the page", `document.querySelector(".wait-box").hidden
		&& [...document.querySelectorAll('#transcript [data-type=approval] .chip')].some(c => c.textContent === "allowed")
		&& document.querySelector('#transcript [data-call] .call-state.ok')`)
	p.wait("the run's controls offered", `!document.querySelector(".controls .live").hidden`)
	p.confirm(`button.act-cancel`)
	s.waitEvent(t, "the run's end", 40*time.Second, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "run_finished" && data(e)["status"] == "cancelled"
	})
	p.wait("the run cancelled", `document.querySelector('#transcript [data-type=run_finished] .chip')?.textContent === "cancelled"`)
}

// The plan a run in plan mode waits on is shown on the page and accepted
// there "to run autonomously": the run switches to build mode under
// autonomous control, both recorded as a person's, and completes.
func TestWebPagePlanAccepted(t *testing.T) {
	t.Parallel()
	b := browserFor(t)
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	m := newModel(t, fixSteps()...)
	code, v := s.call(t, "POST", "/api/runs", `{"task": "fix calc", "flags": {"mode": "plan", "control": "assisted", `+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	id := v["run"].(string)
	p := openTab(t, b, s, "#/")
	p.wait("the plan waiting on the runs", `document.querySelector("#waiting:not([hidden]) .waiting-row[data-run='`+id+`']")`)
	p.click(`.waiting-row a[href="#/run/` + id + `"]`)
	p.wait("the plan on the run", `document.querySelector(".plan-box:not([hidden]) pre.plan")?.textContent.includes("Add adds")`)
	p.click(`.plan-box button.act-accept-auto`)
	p.wait("the run complete", `[...document.querySelectorAll('#transcript [data-type=run_finished] .chip')].map(c => c.textContent).join() === "needs approval,complete"
		&& document.querySelector("article.run").dataset.status === "complete" && document.querySelector(".plan-box").hidden`)
	code, st := s.call(t, "GET", "/api/runs/"+id, "")
	axes, _ := st["axes"].(map[string]any)
	if code != 200 || axes["mode"] != "build" || axes["control"] != "autonomous" {
		t.Fatalf("after accepting on the page: %d %v", code, st)
	}
	var mode, control bool
	for _, x := range st["transitions"].([]any) {
		tr := x.(map[string]any)
		mode = mode || tr["axis"] == "mode" && tr["from"] == "plan" && tr["to"] == "build" && tr["by"] == "person"
		control = control || tr["axis"] == "control" && tr["from"] == "assisted" && tr["to"] == "autonomous" && tr["by"] == "person"
	}
	if !mode || !control {
		t.Fatalf("the acceptance's transitions were not recorded: %v", st["transitions"])
	}
}

// slowFix is fixSteps with the model taking its time on each answer, so
// that the run's events come over several seconds.
func slowFix(ms int) []step {
	steps := fixSteps()
	for _, st := range steps {
		st["delay_ms"] = ms
	}
	return steps
}

// Streams dropped mid-run reconnect from their last event: the page
// shows every event of the run exactly once, in order, as the store has
// them; a reload rebuilds the same transcript.
func TestWebPageReconnect(t *testing.T) {
	t.Parallel()
	b := browserFor(t)
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	m := newModel(t, slowFix(700)...)
	code, v := s.call(t, "POST", "/api/runs", `{"task": "fix calc", "flags": {`+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	id := v["run"].(string)
	p := openTab(t, b, s, "#/run/"+id)
	drops, shown := 0, 0
	for drops < 3 {
		// Drop once the streams are back and more events came.
		p.wait("more events", fmt.Sprintf(`document.querySelectorAll("#transcript [data-seq]").length > %d
			&& window.__ultra.streams().every(s => s.state === "live")`, shown+2))
		if eval[bool](p, `!!document.querySelector('#transcript [data-type=run_finished]')`) {
			break
		}
		shown = eval[int](p, `document.querySelectorAll("#transcript [data-seq]").length`)
		eval[bool](p, `window.__ultra.dropStreams(), true`)
		drops++
	}
	if drops < 2 {
		t.Fatalf("the run ended before the streams were dropped twice (%d)", drops)
	}
	p.wait("the run's end", `document.querySelector('#transcript [data-type=run_finished]')`)
	p.wait("the streams back", `window.__ultra.streams().every(s => s.state === "live")`)
	streams := eval[[]struct {
		Path     string
		Connects int
		Drops    int
	}](p, `window.__ultra.streams()`)
	for _, st := range streams {
		if st.Drops != drops || st.Connects != drops+1 {
			t.Errorf("stream %s: %d drops, %d connects; want %d and %d", st.Path, st.Drops, st.Connects, drops, drops+1)
		}
	}
	want := storeSeqs(t, s, id, "run_finished")
	if got := p.seqs(); !slices.Equal(got, want) {
		t.Fatalf("after %d drops the page shows events\n%v\nthe store has\n%v", drops, got, want)
	}
	// A reload keeps the token (not in the address any more) and the view.
	p.do(chromedp.Reload())
	p.wait("the transcript again", `document.querySelector('#transcript [data-type=run_finished]')`)
	if got := p.seqs(); !slices.Equal(got, want) {
		t.Fatalf("after a reload the page shows events\n%v\nthe store has\n%v", got, want)
	}
}

// Two tabs on one run stay consistent: an approval in one and a steer in
// the other show in both, and both show the same events.
func TestWebPageTwoTabs(t *testing.T) {
	t.Parallel()
	b := browserFor(t)
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	s.follow(t, "/api/events", "")
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("glob", map[string]any{"pattern": "**/*.go"})),
		step{"text": "waiting", "delay_ms": 20000})
	code, v := s.call(t, "POST", "/api/runs", `{"task": "look at calc", "flags": {"control": "manual", `+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	id := v["run"].(string)
	a := openTab(t, b, s, "#/run/"+id)
	c := openTab(t, b, s, "#/run/"+id)
	waits := func(tool string) string {
		return `document.querySelector(".wait-box:not([hidden]) .waiting-call .tool")?.textContent === "` + tool + `"`
	}
	a.wait("the read waiting in tab A", waits("read"))
	c.wait("the read waiting in tab B", waits("read"))
	a.click(`.wait-box button.act-allow`)
	a.wait("the glob waiting in tab A", waits("glob"))
	c.wait("the glob waiting in tab B", waits("glob"))
	// Steer from tab B: the model mode changes now; both tabs show it.
	c.click(`details.steer > summary`)
	c.do(chromedp.SetValue(chromedp.CSS(`.steer-form select[name="model-mode"]`), "deep"),
		chromedp.SetValue(chromedp.CSS(`.steer-form select[name="scope"]`), "now"))
	c.click(`button.act-steer`)
	s.waitEvent(t, "the steer", 20*time.Second, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "axis_changed" && data(e)["axis"] == "model_mode" && data(e)["to"] == "deep"
	})
	for _, p := range []*tab{a, c} {
		p.wait("the model mode deep", `document.querySelector(".facts .badge [aria-label='model mode deep']")
			&& document.querySelector('#transcript [data-type=axis_changed]')`)
	}
	// A denial says why: without a reason the page asks for one.
	c.click(`.wait-box button.act-deny`)
	c.wait("a reason asked for", `[...document.querySelectorAll(".notice")].some(n => n.textContent.includes("the model reads it"))`)
	c.do(chromedp.SetValue(chromedp.CSS(`.wait-box input[type=text]`), "not now"))
	c.click(`.wait-box button.act-deny`)
	s.waitEvent(t, "the denial", 20*time.Second, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "approval" && data(e)["state"] == "denied"
	})
	for _, p := range []*tab{a, c} {
		p.wait("the denial and no call waiting", `document.querySelector(".wait-box").hidden
			&& [...document.querySelectorAll('#transcript [data-type=approval] .chip')].some(c => c.textContent === "denied")`)
	}
	a.confirm(`button.act-cancel`)
	for _, p := range []*tab{a, c} {
		p.wait("the run cancelled", `document.querySelector('#transcript [data-type=run_finished] .chip')?.textContent === "cancelled"
			&& document.querySelector("article.run").dataset.status === "cancelled"`)
	}
	want := storeSeqs(t, s, id, "run_finished")
	if ga, gc := a.seqs(), c.seqs(); !slices.Equal(ga, want) || !slices.Equal(gc, want) {
		t.Fatalf("tab A shows %v\ntab B shows %v\nthe store has %v", ga, gc, want)
	}
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The main views, wide and narrow: the runs, a run's transcript, its
// goals with a browser criterion's screenshot inline, and a call waiting
// for approval. With ULTRA_WRITE_SCREENSHOTS=1 they go to
// docs/screenshots/; otherwise to a temporary directory.
func TestWebPageScreenshots(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the browser criterion serves its page with it")
	}
	b := browserFor(t)
	out := t.TempDir()
	if os.Getenv("ULTRA_WRITE_SCREENSHOTS") == "1" {
		out = filepath.Join("..", "docs", "screenshots")
		must(t, os.MkdirAll(out, 0o755))
	}
	files := map[string]string{"web/index.html": "<!doctype html><html><body><h1>calc</h1><p>Add(2, 3) is shown here</p></body></html>\n"}
	for k, v := range calcProject {
		files[k] = v
	}
	dir := repo(t, files)
	s := serveIn(t, dir, ultraEnv(t))
	port := freePort(t)
	page := crit("regression", "browser", "the calc page still shows", map[string]any{
		"start": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1 --directory web", port),
		"url":   fmt.Sprintf("http://127.0.0.1:%d/index.html", port),
		"steps": []any{map[string]any{"wait_text": "calc"}}, "expect_text": "Add"})
	g := calcGoals()
	crits := g["goals"].([]any)[0].(map[string]any)["criteria"].([]map[string]any)
	crits[2] = page
	steps := fixSteps()
	steps[1] = calls(call("goals", g))
	m := newModel(t, steps...)
	code, v := s.call(t, "POST", "/api/runs", `{"task": "fix calc so that Add adds", "flags": {`+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	done := v["run"].(string)
	wm := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})), step{"text": "waiting", "delay_ms": 25000})
	code, v = s.call(t, "POST", "/api/runs", `{"task": "run the calc tests", "flags": {"control": "manual", "permission-profile": "trusted", `+modelFlags(wm)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	waiting := v["run"].(string)
	p := openTab(t, b, s, "#/run/"+done)
	p.wait("the run complete", `document.querySelector("article.run")?.dataset.status === "complete"`)
	eval[bool](p, `document.querySelector("#transcript .dl-add").scrollIntoView({block: "center"}), true`)
	p.shot(out, "run-transcript")
	p.click(`#tab-goals`)
	p.wait("the screenshot evidence", `[...document.querySelectorAll("#panel-goals img.shot")].some(i => i.complete && i.naturalWidth > 100)`)
	eval[bool](p, `document.querySelector("[data-criterion$='-C3']").scrollIntoView({block: "center"}), true`)
	p.shot(out, "run-goals")
	// A text evidence file opens on demand.
	p.click(`[data-criterion$="-C3"] .evidence-text:last-of-type > summary`)
	p.wait("the receipt's text", `[...document.querySelectorAll("[data-criterion$='-C3'] .evidence-text[open] pre")].some(e => e.textContent.includes("leftovers"))`)
	p.do(chromedp.Navigate(s.url + "/#/run/" + waiting))
	p.wait("the call waiting", `document.querySelector(".wait-box:not([hidden]) button.act-allow")`)
	p.shot(out, "run-approval")
	p.do(chromedp.Navigate(s.url + "/#/"))
	p.wait("both runs listed", `document.querySelectorAll("#runs .run-row").length === 2 && document.querySelector("#waiting:not([hidden]) .waiting-row")`)
	p.shot(out, "runs")
	// A narrow window: nothing is wider than it.
	p.do(chromedp.EmulateViewport(380, 800))
	for _, view := range []struct{ hash, name, ready string }{
		{"#/", "runs-narrow", `document.querySelectorAll("#runs .run-row").length === 2`},
		{"#/run/" + waiting, "run-approval-narrow", `document.querySelector(".wait-box:not([hidden]) button.act-allow")`},
	} {
		p.do(chromedp.Navigate(s.url + "/" + view.hash))
		p.wait(view.name, view.ready)
		if eval[bool](p, `document.documentElement.scrollWidth > innerWidth + 1`) {
			t.Errorf("%s: the page is wider than a 380px window", view.name)
		}
		p.shot(out, view.name)
	}
	s.call(t, "POST", "/api/runs/"+waiting+"/cancel", "")
	for _, n := range []string{"runs", "run-transcript", "run-goals", "run-approval", "runs-narrow", "run-approval-narrow"} {
		if fi, err := os.Stat(filepath.Join(out, n+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s: %v", n, err)
		}
	}
}
