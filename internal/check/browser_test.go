package check

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal"
)

func needChromium(t *testing.T) {
	t.Helper()
	if FindChromium("") == "" {
		t.Skip("chromium is not installed: apt-get install chromium")
	}
}

// pageHTML has a button that changes a paragraph's text and a field whose
// value is shown as you type.
const pageHTML = `<!doctype html>
<html><head><title>check</title></head>
<body>
<p id="msg">Not clicked yet</p>
<button id="btn" onclick="document.getElementById('msg').textContent = 'Clicked!'">Press me</button>
<input id="name" oninput="document.getElementById('echo').textContent = 'Hello, ' + this.value">
<p id="echo"></p>
</body></html>
`

// pageDir is a directory with index.html.
func pageDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(pageHTML), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pageCheck serves dir with python3 -m http.server on port.
func pageCheck(t *testing.T, port int, m string) goal.Check {
	return goal.Check{
		Start: fmt.Sprintf("exec %s -m http.server %d --bind 127.0.0.1 # %s", python(t), port, m),
		URL:   fmt.Sprintf("http://127.0.0.1:%d/index.html", port),
	}
}

func TestBrowserPass(t *testing.T) {
	needChromium(t)
	m := marker(t)
	port := freePort(t)
	r := newRunner(t, pageDir(t))
	c := pageCheck(t, port, m)
	c.Steps = []goal.Step{
		{Click: "#btn"},
		{WaitText: "Clicked!"},
		{Type: &goal.TypeStep{Selector: "#name", Text: "Ada"}},
		{WaitText: "Hello, Ada"},
	}
	c.ExpectText = `Clicked!\s+Press me`
	c.ExpectSelector = "button#btn"
	res := r.Run(context.Background(), crit(goal.ChannelBrowser, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "summary", res.Summary, `step 2 wait_text "Clicked!" ✓`, `step 4 wait_text "Hello, Ada" ✓`, `expect_text "Clicked!\\s+Press me" ✓`, `expect_selector "button#btn" ✓`)
	shot := evidence(t, r, res, "browser.png")
	if !bytes.HasPrefix(shot, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("browser.png is not a PNG: % x", shot[:min(len(shot), 8)])
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("browser.png does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("the screenshot is %v", b)
	}
	log := string(evidence(t, r, res, "browser-actions.txt"))
	wantIn(t, "browser-actions.txt", log, "chromium started", "navigate http://127.0.0.1:", "step 1 click \"#btn\" → ok", "step 3 type \"Ada\" into \"#name\" → ok", "step 4 wait_text \"Hello, Ada\" → ok", "screenshot: browser.png", "--- page text at the end\nClicked!")
	wantIn(t, "receipt", res.Receipt, "chromium pgid", "browser (closed); process group gone; profile removed", "server (SIGTERM)", "leftovers: none")
	noneLeft(t, m)
	profile := browserProfile(t, log)
	noneLeft(t, profile)
	if _, err := os.Stat(profile); err == nil {
		t.Errorf("the browser's profile %s is left", profile)
	}
}

func TestBrowserFail(t *testing.T) {
	needChromium(t)
	m := marker(t)
	port := freePort(t)
	r := newRunner(t, pageDir(t))
	c := pageCheck(t, port, m)
	c.Steps = []goal.Step{{Click: "#btn"}}
	c.ExpectText = "Saved"
	c.ExpectSelector = "#missing"
	res := r.Run(context.Background(), crit(goal.ChannelBrowser, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `expect_text "Saved" ✗ got Clicked!`, `expect_selector "#missing" ✗ got no shown element matches`)
	evidence(t, r, res, "browser.png")
	noneLeft(t, m)
	noneLeft(t, browserProfile(t, string(evidence(t, r, res, "browser-actions.txt"))))
}

// browserProfile is the profile directory of the check's chromium, as
// its action log names it: what this check's browser processes, and no
// other's, hold on their command lines.
func browserProfile(t *testing.T, log string) string {
	t.Helper()
	m := regexp.MustCompile(`chromium started \(pgid \d+, profile (\S+)\)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the action log names no profile:\n%s", log)
	}
	return m[1]
}

// A click on something that is not there fails the step within the
// step's time, and the steps after it do not run.
func TestBrowserMissingElement(t *testing.T) {
	needChromium(t)
	port := freePort(t)
	r := newRunner(t, pageDir(t))
	c := pageCheck(t, port, marker(t))
	c.Steps = []goal.Step{{Click: "#nope"}, {WaitText: "Clicked!"}}
	res := r.Run(context.Background(), crit(goal.ChannelBrowser, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `step 1 click "#nope" done ✗ got no visible element matched within 5s`)
	log := string(evidence(t, r, res, "browser-actions.txt"))
	wantIn(t, "browser-actions.txt", log, "step 2: not run")
}

func TestBrowserURLMustBeLocal(t *testing.T) {
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelBrowser, goal.Check{Start: "true", URL: "https://example.com/", ExpectText: "x"}))
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "must point at the program under test")
	r.Chromium = "/nonexistent/chromium"
	res = r.Run(context.Background(), crit(goal.ChannelBrowser, goal.Check{Start: "true", URL: "http://127.0.0.1:1/", ExpectText: "x"}))
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "chromium not found: apt-get install chromium")
}

// A page whose own script lies about its text (innerText and
// querySelector overridden) cannot pass the check: ultra reads the page
// in a world of its own.
func TestBrowserPageCannotLieAboutItsText(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	page := `<!doctype html><html><body><p id="out">hi</p><script>
Object.defineProperty(HTMLElement.prototype, "innerText", {get() { return "calc result: 6" }});
Document.prototype.querySelector = function () { return document.body };
</script></body></html>`
	os.WriteFile(filepath.Join(dir, "index.html"), []byte(page), 0o644)
	for _, want := range []goal.Check{{ExpectText: "calc result: 6"}, {ExpectSelector: "#missing"}} {
		c := pageCheck(t, freePort(t), "liar")
		c.ExpectText, c.ExpectSelector = want.ExpectText, want.ExpectSelector
		res := newRunner(t, dir).Run(context.Background(), crit(goal.ChannelBrowser, c))
		logResult(t, res)
		wantStatus(t, res, goal.CriterionFail)
	}
}

// Text and elements a person cannot see do not count: hidden by opacity,
// moved off the page, display:none.
func TestBrowserHiddenDoesNotCount(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	page := `<!doctype html><html><body><p>calc result: WRONG</p>
<span style="opacity:0">sum is 5</span>
<div style="position:absolute;left:-9999px">moved away</div>
<div id="ok" style="display:none">ok</div><p id="seen">seen</p></body></html>`
	os.WriteFile(filepath.Join(dir, "index.html"), []byte(page), 0o644)
	for _, tc := range []struct {
		check goal.Check
		want  goal.CriterionStatus
	}{
		{goal.Check{ExpectText: "sum is 5"}, goal.CriterionFail},
		{goal.Check{ExpectText: "moved away"}, goal.CriterionFail},
		{goal.Check{ExpectSelector: "#ok"}, goal.CriterionFail},
		{goal.Check{ExpectText: "calc result: WRONG", ExpectSelector: "#seen"}, goal.CriterionPass},
	} {
		c := pageCheck(t, freePort(t), "hidden")
		c.ExpectText, c.ExpectSelector = tc.check.ExpectText, tc.check.ExpectSelector
		res := newRunner(t, dir).Run(context.Background(), crit(goal.ChannelBrowser, c))
		logResult(t, res)
		wantStatus(t, res, tc.want)
	}
}
