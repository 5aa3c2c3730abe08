package check

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

func needDesktop(t *testing.T) {
	t.Helper()
	if why := desktopMissing(DesktopTools()); why != "" {
		t.Skip(why)
	}
	if err := exec.Command("python3", "-c", "import tkinter").Run(); err != nil {
		t.Skip("python3's tkinter is missing (the test's GUI program needs it): apt-get install python3-tk")
	}
}

// tkApp is the program under test: a Tk window with a Save button that,
// clicked, shows "Saved 3 items". hostile shows it from the start and its
// button does nothing; delayed shows it 1.5 s after the start, on a timer,
// and its button does nothing. The window also says whether another X display
// (hostDisplay, when set) is reachable from the program. Its argv holds
// the marker m.
const tkApp = `import os, socket, sys, tkinter as tk
hostile = sys.argv[1] in ("hostile", "delayed")
def reach(n):
    for addr in ("\0/tmp/.X11-unix/X" + n, "/tmp/.X11-unix/X" + n):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(addr)
            return True
        except OSError:
            pass
        finally:
            s.close()
    return False
root = tk.Tk()
root.title("App")
root.geometry("520x260+40+40")
font = ("DejaVu Sans", 16)
msg = tk.Label(root, text="Saved 3 items" if hostile else "Nothing saved", font=font)
def save():
    if not hostile:
        msg.config(text="Saved 3 items")
tk.Button(root, text="Save", font=font, command=save).pack(pady=16)
if sys.argv[1] == "delayed":
    msg.config(text="Nothing saved")
    root.after(1500, lambda: msg.config(text="Saved 3 items"))
msg.pack()
host = os.environ.get("HOST_DISPLAY", "")
if host:
    tk.Label(root, text="host display " + ("REACHED" if reach(host) else "unreachable"), font=font).pack(pady=16)
root.mainloop()
`

// tkDir is a directory holding the test program.
func tkDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte(tkApp), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// saveCheck clicks Save (found on the screen) and expects the message.
func saveCheck(mode, m string) goal.Check {
	return goal.Check{
		Start:      "exec python3 app.py " + mode + " " + m,
		Steps:      []goal.Step{{WaitText: "Save"}, {Click: "Save"}, {WaitText: "Saved 3 items"}, {Screenshot: true}},
		ExpectText: `Saved \d+ items`,
	}
}

// xservers are the pids of the X servers running now.
func xservers() []string {
	var out []string
	for _, p := range procsWith("Xvfb") {
		pid, _, _ := strings.Cut(p, ":")
		out = append(out, pid)
	}
	return out
}

// noNewXServer fails when an X server runs that did not before.
func noNewXServer(t *testing.T, before []string) {
	t.Helper()
	for _, pid := range xservers() {
		if !slices.Contains(before, pid) {
			t.Errorf("an X server started by the check is still running: pid %s", pid)
		}
	}
}

func wantPNG(t *testing.T, r Runner, res Result, name string) {
	t.Helper()
	if b := evidence(t, r, res, name); !isPNG(b) {
		t.Errorf("%s is not a PNG: % x", name, b[:min(len(b), 8)])
	}
}

func TestDesktopPass(t *testing.T) {
	needDesktop(t)
	m := marker(t)
	before := xservers()
	r := newRunner(t, tkDir(t))
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, saveCheck("honest", m)))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "summary", res.Summary, "desktop 1024x768: 4 of 4 steps run", `step 3 wait_text "Saved 3 items" ✓`, `expect_text "Saved \\d+ items" ✓`)
	for _, n := range []string{"desktop.png", "desktop-step4.png", "desktop-control-empty.png", "desktop-control-idle.png"} {
		wantPNG(t, r, res, n)
	}
	log := string(evidence(t, r, res, "desktop-actions.txt"))
	wantIn(t, "desktop-actions.txt", log, "=== control: the same steps on an empty desktop", "=== check: the program, then the steps",
		`step 2 click "Save" at (`, "=== control: the program without the input", `step 2 click "Save" → skipped (paused`,
		`step 3 wait_text "Saved 3 items"`, "Nothing saved", "its socket is gone")
	wantIn(t, "receipt", res.Receipt, "Xvfb display :", "X server (SIGTERM)", "program (SIGTERM)", "leftovers: none")
	noneLeft(t, m)
	noNewXServer(t, before)
}

// A program that shows the expected text whatever happens is refused:
// the control without the click meets every expect after the click.
// So is one that shows it on a timer, whenever the click comes.
func TestDesktopHostileRefused(t *testing.T) {
	needDesktop(t)
	for _, mode := range []string{"hostile", "delayed"} {
		t.Run(mode, func(t *testing.T) {
			m := marker(t)
			before := xservers()
			r := newRunner(t, tkDir(t))
			res := r.Run(context.Background(), crit(goal.ChannelDesktop, saveCheck(mode, m)))
			logResult(t, res)
			wantStatus(t, res, goal.CriterionFail)
			wantIn(t, "summary", res.Summary, "control (the program without the input steps) meets no expect after an input ✗ got every expect after an input is met without the input")
			wantIn(t, "signature", res.Signature, "fail desktop: control (the program without the input steps)")
			wantPNG(t, r, res, "desktop-control-idle.png")
			wantIn(t, "receipt", res.Receipt, "leftovers: none")
			noneLeft(t, m)
			noNewXServer(t, before)
		})
	}
}

// Expectations an empty desktop meets prove nothing: the check stops at
// the first control, before the program starts.
func TestDesktopEmptyControl(t *testing.T) {
	needDesktop(t)
	m := marker(t)
	r := newRunner(t, tkDir(t))
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, goal.Check{
		Start: "exec python3 app.py honest " + m, Steps: []goal.Step{{Click: "Save"}}, ExpectText: "^$|Saved",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, "control (the same steps on an empty desktop) meets no expect ✗ got every expect is met by a desktop with no program on it")
	log := string(evidence(t, r, res, "desktop-actions.txt"))
	wantIn(t, "desktop-actions.txt", log, `step 1 click "Save" → failed`, "is not on the screen")
	if strings.Contains(log, "=== check:") || strings.Contains(res.Receipt, "program pgid") {
		t.Errorf("the program ran after the empty desktop met the expects:\n%s", log)
	}
}

func TestDesktopWrongExpect(t *testing.T) {
	needDesktop(t)
	m := marker(t)
	r := newRunner(t, tkDir(t))
	c := saveCheck("honest", m)
	c.Steps = []goal.Step{{Click: "Save"}, {WaitText: "Saved 4 items"}, {Screenshot: true}}
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `step 2 wait_text "Saved 4 items" ✗ got`, "Saved 3 items")
	wantIn(t, "desktop-actions.txt", string(evidence(t, r, res, "desktop-actions.txt")), "step 3: not run")
	noneLeft(t, m)
}

// Text that never shows fails the click step.
func TestDesktopClickMissingText(t *testing.T) {
	needDesktop(t)
	r := newRunner(t, tkDir(t))
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, goal.Check{
		Start: "exec python3 app.py honest " + marker(t), Steps: []goal.Step{{Click: "Delete"}}, ExpectText: "Deleted",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `step 1 click "Delete" done ✗ got "Delete" is not on the screen`)
}

func TestDesktopToolsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, saveCheck("honest", "x")))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "Xvfb, xdotool, import, tesseract not found: apt-get install xvfb xdotool imagemagick tesseract-ocr")
}

// Contained, the program reaches its own display and no other: an X
// server on the host is unreachable from inside, while the same program
// uncontained reaches it.
func TestContainedDesktop(t *testing.T) {
	needDesktop(t)
	display := hostXServer(t)
	c := saveCheck("honest", marker(t))
	c.Start = "HOST_DISPLAY=" + display + " " + c.Start
	c.ExpectText = "host display unreachable"
	dir := tkDir(t)
	r := containedRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "receipt", res.Receipt, "(sandboxed)", "Xvfb display :", "leftovers: none")
	wantPNG(t, r, res, "desktop.png")

	c.ExpectText = "host display REACHED"
	res = newRunner(t, dir).Run(context.Background(), crit(goal.ChannelDesktop, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
}

// hostXServer starts an X server on the host and returns its display
// number once it accepts connections. The number is one no check's own
// server takes (they take the first free one, from 0), and not one a
// killed server's lock still holds; the server is stopped with SIGTERM,
// so that it removes its lock and socket.
func hostXServer(t *testing.T) string {
	t.Helper()
	for n := 157; n < 200; n++ {
		if _, err := os.Lstat(fmt.Sprintf("/tmp/.X%d-lock", n)); err == nil {
			continue
		}
		if ok := startHostX(t, strconv.Itoa(n)); ok {
			return strconv.Itoa(n)
		}
	}
	t.Fatal("no host X server started on displays :157 to :199")
	return ""
}

// startHostX starts Xvfb on display n and reports whether it said it was
// ready (-displayfd: it writes the number when it accepts connections).
func startHostX(t *testing.T, n string) bool {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	host := exec.Command("Xvfb", ":"+n, "-displayfd", "3", "-nolisten", "tcp", "-noreset")
	host.ExtraFiles = []*os.File{w}
	err = host.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = host.Wait(); close(exited) }()
	stop := func() {
		_ = host.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = host.Process.Kill()
			<-exited
		}
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case said := <-got:
		if said != n {
			stop() // it did not start there (its lock is taken)
			return false
		}
		t.Cleanup(stop)
		return true
	case <-time.After(20 * time.Second):
		stop()
		t.Fatalf("the host's X server on :%s did not start", n)
	}
	return false
}

// A process the program leaves behind (its own session, outside the
// program's group) outlives it: the check is BLOCKED, whatever the
// screen showed, and the process is killed.
func TestDesktopLeftoverBlocks(t *testing.T) {
	needDesktop(t)
	m := marker(t)
	r := newRunner(t, tkDir(t))
	c := saveCheck("honest", m)
	c.Start = "setsid bash -c 'exec -a " + m + "-daemon sleep 300' & " + c.Start
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "leftover: process still running after the check's programs stopped")
	wantIn(t, "desktop-actions.txt", string(evidence(t, r, res, "desktop-actions.txt")), "leftovers after this desktop: 1 (killed)")
	noneLeft(t, m)
}

// A check whose time runs out is BLOCKED, never judged on what the screen
// showed until then.
func TestDesktopTimeout(t *testing.T) {
	needDesktop(t)
	r := newRunner(t, tkDir(t))
	c := saveCheck("honest", marker(t))
	c.Steps = []goal.Step{{WaitText: "never shown"}}
	c.ExpectText = ""
	c.TimeoutSeconds = 3
	res := r.Run(context.Background(), crit(goal.ChannelDesktop, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "timed out after 3s (timeout_seconds)")
}
