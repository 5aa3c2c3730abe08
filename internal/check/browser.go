package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ultra-dev/ultra/internal/proc"
)

const (
	// browserStart bounds the browser's start and the first navigation.
	browserStart = 30 * time.Second
	// browserClose bounds closing the browser gracefully.
	browserClose = 5 * time.Second
	// innerText is the text a person sees on the page: the text of
	// elements that are rendered, not transparent or invisible, with a
	// size, and inside the page (not moved off it), one line each.
	innerText = `(() => {
  if (!document.body) return "";
  const W = Math.max(document.documentElement.scrollWidth, innerWidth), H = Math.max(document.documentElement.scrollHeight, innerHeight);
  const out = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    const t = n.textContent.trim();
    if (t && ` + "ultraSeen" + `(n.parentElement, W, H)) out.push(t);
  }
  return out.join("\n");
})()`
	// seenJS defines ultraSeen(element, W, H): the element is shown.
	seenJS = `function ultraSeen(e, W, H) {
  if (!e || (e.checkVisibility && !e.checkVisibility({opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true}))) return false;
  for (let a = e; a; a = a.parentElement) { if (parseFloat(getComputedStyle(a).opacity) === 0) return false; }
  const r = e.getBoundingClientRect(), x = r.left + scrollX, y = r.top + scrollY;
  return r.width >= 1 && r.height >= 1 && x + r.width > 0 && y + r.height > 0 && x < W && y < H;
}`
)

// browser starts the server, waits for the url's port, and drives a
// headless chromium (its own profile in a temporary directory, its own
// process group) through the steps; the assertions read the page's text
// and DOM, and a full-page screenshot is kept.
func (s *sup) browser(ctx context.Context) {
	c := s.in.Check
	_, port, _ := loopbackURL(c.URL) // validated
	bin := FindChromium(s.in.Chromium)
	if bin == "" {
		s.block("chromium not found: apt-get install chromium (or set the browser program)", "")
		return
	}
	var log strings.Builder // the action log
	var shot []byte
	var pageText string
	bout := proc.Capture{Max: maxCapture} // the browser's own output
	server, _, ok := s.startServer(ctx, c.Start, port, &log)
	s.render = append(s.render, func() {
		if pageText != "" {
			fmt.Fprintf(&log, "\n--- page text at the end\n%s", withNewline(pageText))
		}
		if server != nil {
			fmt.Fprintf(&log, "\n--- server output (stdout %d bytes, stderr %d bytes; %s)\n%s%s",
				server.stdout.Len(), server.stderr.Len(), orRunning(server.status()),
				withNewline(server.stdout.String()), withNewline(server.stderr.String()))
		}
		if s.rep.Blocked != "" && bout.Len() > 0 {
			fmt.Fprintf(&log, "\n--- browser output\n%s", withNewline(bout.String()))
		}
		s.rep.Artifacts = append(s.rep.Artifacts, artifact{Name: "browser-actions.txt", Data: []byte(log.String())})
		if len(shot) > 0 {
			s.rep.Artifacts = append(s.rep.Artifacts, artifact{Name: "browser.png", Data: shot})
		}
	})
	if !ok {
		return
	}
	profile, err := s.tempDir("ultra-check-chromium-")
	if err != nil {
		s.block("creating the browser's profile directory", err.Error())
		return
	}
	var mu sync.Mutex
	var bcmd *exec.Cmd
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		// The check's sandbox contains the browser; its own sandbox needs
		// namespaces the check's sandbox does not give.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(profile),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(1280, 800),
		chromedp.CombinedOutput(&bout),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
			cmd.Env = s.env
			mu.Lock()
			bcmd = cmd
			mu.Unlock()
		}),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	browserPid := func() int {
		mu.Lock()
		defer mu.Unlock()
		if bcmd == nil || bcmd.Process == nil {
			return 0
		}
		return bcmd.Process.Pid
	}
	var pid int
	started := false
	s.cleanups = append(s.cleanups, func() {
		if started {
			cctx, cancel := context.WithTimeout(bctx, browserClose)
			_ = chromedp.Cancel(cctx)
			cancel()
		}
		cancelBrowser()
		cancelAlloc() // waits until the browser process was reaped
		if pid == 0 {
			pid = browserPid()
		}
		s.stopBrowser(pid, profile)
	})

	// The first action starts the browser; its context must not carry a
	// timeout (that would end the browser), so the wait is bounded here.
	startErr := make(chan error, 1)
	go func() { startErr <- chromedp.Do(bctx) }()
	select {
	case err = <-startErr:
	case <-ctx.Done():
		cancelBrowser()
		cancelAlloc()
		<-startErr
		s.timedOut("starting chromium", excerpt(bout.String(), 300))
		return
	case <-time.After(browserStart):
		cancelBrowser()
		cancelAlloc()
		<-startErr
		s.block(fmt.Sprintf("chromium did not start within %s", browserStart), excerpt(bout.String(), 300))
		return
	}
	if err != nil {
		why := "chromium did not start"
		if strings.Contains(bout.String(), "socket() failed: Permission denied") {
			// Its process singleton needs a Unix socket in the profile.
			why = "chromium did not start: it cannot create Unix sockets here (the check's sandbox must allow them for the browser channel)"
		}
		s.block(why, err.Error()+"; "+excerpt(bout.String(), 300))
		return
	}
	started = true
	pid = browserPid()
	s.extraOwned = append(s.extraOwned, pid)
	s.rep.Started = append(s.rep.Started, fmt.Sprintf("chromium pgid %d (headless, private profile)", pid))
	fmt.Fprintf(&log, "chromium started (pgid %d, profile %s): %s\n", pid, profile, bin)

	// step runs one browser action with a deadline within the check's.
	step := func(d time.Duration, a chromedp.Action[chromedp.Void]) error {
		sctx, cancel := context.WithTimeout(bctx, d)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		return chromedp.Do(sctx, a)
	}
	text := func(d time.Duration) (string, error) {
		sctx, cancel := context.WithTimeout(bctx, d)
		defer cancel()
		return chromedp.Run(sctx, isolated[string](innerText))
	}

	began := time.Now()
	if err := step(browserStart, chromedp.Navigate(c.URL)); err != nil {
		if ctx.Err() != nil {
			s.timedOut("loading "+c.URL, "")
			return
		}
		fmt.Fprintf(&log, "navigate %s → failed: %v\n", c.URL, err)
		s.rep.Observed = "browser " + c.URL + " → did not load"
		s.rep.Assertions = append(s.rep.Assertions, assertion{Name: "navigate", Want: strconv.Quote(c.URL), Got: excerpt(err.Error(), 120)})
		return
	}
	fmt.Fprintf(&log, "navigate %s → loaded (+%s)\n", c.URL, time.Since(began).Round(time.Millisecond))
	ran := 0
	failed := false
	for i, st := range c.Steps {
		ran++
		var what string
		var err error
		switch {
		case st.Click != "":
			what = "click " + strconv.Quote(st.Click)
			err = step(stepTimeout, chromedp.Click(chromedp.CSS(st.Click)))
		case st.Type != nil:
			what = fmt.Sprintf("type %s into %s", strconv.Quote(st.Type.Text), strconv.Quote(st.Type.Selector))
			err = step(stepTimeout, chromedp.SendKeys(chromedp.CSS(st.Type.Selector), st.Type.Text))
		case st.WaitText != "":
			what = "wait_text " + strconv.Quote(st.WaitText)
			a := s.waitText(ctx, text, fmt.Sprintf("step %d wait_text", i+1), st.WaitText)
			s.rep.Assertions = append(s.rep.Assertions, a)
			if !a.OK {
				err = errors.New("not shown within " + stepTimeout.String() + "; the page shows: " + excerpt(a.Got, 120))
			}
		}
		if ctx.Err() != nil {
			fmt.Fprintf(&log, "step %d %s → the check's time ran out\n", i+1, what)
			s.timedOut(fmt.Sprintf("at browser step %d (%s)", i+1, what), "")
			return
		}
		if err != nil {
			fmt.Fprintf(&log, "step %d %s → failed (+%s): %v\n", i+1, what, time.Since(began).Round(time.Millisecond), err)
			if st.WaitText == "" {
				why := err.Error()
				if errors.Is(err, context.DeadlineExceeded) {
					why = "no visible element matched within " + stepTimeout.String()
				}
				s.rep.Assertions = append(s.rep.Assertions, assertion{Name: fmt.Sprintf("step %d %s", i+1, what), Want: "done", Got: why})
			}
			for j := i + 1; j < len(c.Steps); j++ {
				fmt.Fprintf(&log, "step %d: not run\n", j+1)
			}
			failed = true
			break
		}
		fmt.Fprintf(&log, "step %d %s → ok (+%s)\n", i+1, what, time.Since(began).Round(time.Millisecond))
	}
	pageText, err = text(stepTimeout)
	if err != nil {
		fmt.Fprintf(&log, "reading the page's text failed: %v\n", err)
	}
	if c.ExpectText != "" {
		a := matches("expect_text", c.ExpectText, pageText)
		if err != nil {
			a = assertion{Name: "expect_text", Want: strconv.Quote(c.ExpectText), Got: "the page's text could not be read: " + err.Error()}
		}
		s.rep.Assertions = append(s.rep.Assertions, a)
		fmt.Fprintf(&log, "%s\n", renderAssertion(a))
	}
	if c.ExpectSelector != "" {
		q, _ := json.Marshal(c.ExpectSelector)
		sctx, cancel := context.WithTimeout(bctx, stepTimeout)
		found, err := chromedp.Run(sctx, isolated[bool](fmt.Sprintf(
			"[...document.querySelectorAll(%s)].some(e => ultraSeen(e, Math.max(document.documentElement.scrollWidth, innerWidth), Math.max(document.documentElement.scrollHeight, innerHeight)))", q)))
		cancel()
		a := assertion{Name: "expect_selector", Want: strconv.Quote(c.ExpectSelector), OK: err == nil && found, Got: "shown"}
		switch {
		case err != nil:
			a.Got = "error: " + excerpt(err.Error(), 120)
		case !found:
			a.Got = "no shown element matches (none, or only hidden ones)"
		}
		s.rep.Assertions = append(s.rep.Assertions, a)
		fmt.Fprintf(&log, "%s\n", renderAssertion(a))
	}
	sctx, cancel := context.WithTimeout(bctx, 2*stepTimeout)
	shot, err = chromedp.Run(sctx, chromedp.FullScreenshot(100))
	cancel()
	if err != nil {
		fmt.Fprintf(&log, "screenshot failed: %v\n", err)
		shot = nil
	} else {
		fmt.Fprintf(&log, "screenshot: browser.png (%d bytes, full page)\n", len(shot))
	}
	s.rep.Observed = fmt.Sprintf("browser %s: %d of %d steps run", c.URL, ran, len(c.Steps))
	if failed {
		s.rep.Observed += " (a step failed)"
	}
}

// waitText polls the page's text until pattern matches or the step's
// time is up.
func (s *sup) waitText(ctx context.Context, text func(time.Duration) (string, error), name, pattern string) assertion {
	re := regexp.MustCompile("(?m)" + pattern) // validated; multi-line as matches
	end := time.Now().Add(stepTimeout)
	var last string
	var lastErr error
	for {
		t, err := text(time.Second)
		if err == nil {
			last, lastErr = t, nil
			if loc := re.FindStringIndex(t); loc != nil {
				return assertion{Name: name, Want: strconv.Quote(pattern), Got: excerpt(t[loc[0]:loc[1]], 80), OK: true}
			}
		} else {
			lastErr = err
		}
		if ctx.Err() != nil || time.Now().After(end) {
			got := excerpt(last, 120)
			if lastErr != nil {
				got = "the page's text could not be read: " + lastErr.Error()
			} else if last == "" {
				got = "(empty)"
			}
			return assertion{Name: name, Want: strconv.Quote(pattern), Got: got}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopBrowser checks that the browser's process group is gone (killing
// what is left, a leftover) and removes its profile directory.
func (s *sup) stopBrowser(pid int, profile string) {
	how := "browser (closed)"
	if pid != 0 && !waitFor(termGrace, func() bool { return !groupAlive(pid) }) {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		if !waitFor(termGrace, func() bool { return !groupAlive(pid) }) {
			for _, q := range groupMembers(pid) {
				s.leftover(leftover{What: "browser process still running after the browser closed; killed", Pid: q.Pid, Comm: q.Comm})
			}
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			how = "browser (SIGKILL: its processes outlived the close)"
		} else {
			how = "browser (SIGTERM: its processes outlived the close)"
		}
	}
	if pid != 0 {
		how += "; process group gone"
	}
	_ = os.RemoveAll(profile)
	if _, err := os.Lstat(profile); !errors.Is(err, os.ErrNotExist) {
		s.leftover(leftover{What: "browser profile directory not removed"})
	} else {
		how += "; profile removed"
	}
	s.rep.Stopped = append(s.rep.Stopped, how)
}

// isolated evaluates expression in an isolated world of the page's main
// frame: the page's own script shares its DOM but not its JavaScript
// objects, so a page that overrides innerText or querySelector for its
// own script cannot tell the check a text it does not show.
func isolated[T any](expression string) chromedp.Action[T] {
	return func(ctx context.Context, t *chromedp.Target) (T, error) {
		var zero T
		tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return zero, err
		}
		if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
			return zero, errors.New("the page has no main frame")
		}
		world, err := cdp.Call(ctx, t, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.Frame.ID, WorldName: "ultra-check"})
		if err != nil {
			return zero, err
		}
		return chromedp.Evaluate[T](seenJS+";\n"+expression, func(p *runtime.EvaluateParams) { p.ContextID = world.ExecutionContextID })(ctx, t)
	}
}
