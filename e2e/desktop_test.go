package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Tk window: Save shows "Saved 3 items".
const saveApp = `import tkinter as tk
root = tk.Tk()
root.title("Saver")
root.geometry("480x220+40+40")
font = ("DejaVu Sans", 16)
msg = tk.Label(root, text="Nothing saved", font=font)
tk.Button(root, text="Save", font=font, command=lambda: msg.config(text="Saved 3 items")).pack(pady=16)
msg.pack()
root.mainloop()
`

// A goal proven on a desktop: the run writes a GUI program, ultra starts
// it on a private X server, clicks the button it reads on the screen and
// sees the result; the evidence holds real screenshots with their digests
// and a receipt with nothing left.
func TestDesktopGoal(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"Xvfb", "xdotool", "import", "tesseract", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", prog, err)
		}
	}
	if err := exec.Command("python3", "-c", "import tkinter").Run(); err != nil {
		t.Skip("python3's tkinter is missing (.ci/run installs python3-tk)")
	}
	dir := repo(t, svcProject)
	goals := goalsOf("Save window",
		crit("happy", "desktop", "Save saves the items", map[string]any{"start": "python3 app.py",
			"steps":       []any{map[string]any{"wait_text": "Save"}, map[string]any{"click": "Save"}, map[string]any{"wait_text": "Saved 3 items"}, map[string]any{"screenshot": true}},
			"expect_text": `Saved \d+ items`}),
		crit("edge", "desktop", "the window starts with nothing saved", map[string]any{"start": "python3 app.py",
			"steps": []any{map[string]any{"wait_text": "Nothing saved"}}}),
		crit("adversarial", "command", "there is one Save button", map[string]any{"run": `grep -c 'text="Save"' app.py`, "expect_stdout": "^1$"}))
	m := newModel(t, calls(call("read", map[string]any{"file_path": "README.md"})),
		calls(call("goals", goals)),
		calls(call("write", map[string]any{"file_path": "app.py", "content": saveApp})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve())
	res := ultra(t, dir, runArgs(m, "add a window whose Save button saves the items")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id, wt := runID(t, evs), workdirOf(t, evs)
	if len(judged(evs)) == 0 {
		t.Fatal("no criterion ran")
	}
	for _, e := range judged(evs) {
		if data(e)["status"] != "pass" {
			t.Fatalf("criterion %v", data(e))
		}
	}
	var f struct {
		Goals []struct {
			Status          string
			SuccessCriteria []struct {
				ID               string
				Channel          string
				CapturedEvidence struct {
					Summary, Receipt string
					Files            []struct{ Name, Path, SHA256 string }
				} `json:"capturedEvidence"`
			} `json:"successCriteria"`
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(recordsIn(t, wt), "goals.json"))), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Goals) != 1 || f.Goals[0].Status != "complete" {
		t.Fatalf("goals: %+v", f.Goals)
	}
	happy := f.Goals[0].SuccessCriteria[0].CapturedEvidence
	if !strings.Contains(happy.Summary, `step 3 wait_text "Saved 3 items" ✓`) {
		t.Fatalf("summary: %s", happy.Summary)
	}
	if !strings.Contains(happy.Receipt, "(sandboxed)") || !strings.Contains(happy.Receipt, "Xvfb display :") || !strings.Contains(happy.Receipt, "leftovers: none") {
		t.Fatalf("receipt: %s", happy.Receipt)
	}
	pngs := map[string]bool{}
	for _, ef := range happy.Files {
		b, err := os.ReadFile(filepath.Join(dir, ef.Path))
		if err != nil || sha(b) != ef.SHA256 {
			t.Fatalf("evidence %s: %v (sha256 %s, recorded %s)", ef.Path, err, sha(b), ef.SHA256)
		}
		if strings.HasSuffix(ef.Name, ".png") {
			if !strings.HasPrefix(string(b), "\x89PNG\r\n\x1a\n") {
				t.Fatalf("%s is not a PNG", ef.Name)
			}
			pngs[ef.Name] = true
		}
	}
	for _, n := range []string{"desktop.png", "desktop-step4.png", "desktop-control-empty.png", "desktop-control-idle.png"} {
		if !pngs[n] {
			t.Fatalf("no %s among the evidence (%v)", n, pngs)
		}
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 || !strings.Contains(v.stdout, "intact") {
		t.Fatalf("ledger --verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
}
