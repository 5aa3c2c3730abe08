package goal

import (
	"strings"
	"testing"
)

func TestValidateDesktop(t *testing.T) {
	const c0 = "goals[0].criteria[0].check"
	ok := Check{Start: "python3 app.py", Steps: []Step{{Click: "Save"}, {WaitText: "Saved 3 items"}, {Screenshot: true}}, ExpectText: `Saved \d+ items`}
	with := func(f func(c *Check)) Check {
		c := cloneCheck(ok)
		f(&c)
		return c
	}
	tests := []struct {
		name string
		c    Check
		want []string // each must be in some problem; none means valid
	}{
		{"valid", ok, nil},
		{"valid every action", Check{Start: "./app", Width: 800, Height: 600, Steps: []Step{
			{ClickAt: &Point{X: 799, Y: 0}}, {Type: &TypeStep{Text: "milk"}}, {Key: "Return ctrl+s alt+F4"}, {WaitText: "milk"}, {Screenshot: true}}}, nil},
		{"no start", with(func(c *Check) { c.Start = " " }), []string{c0 + ".start: is required"}},
		{"start not shell", with(func(c *Check) { c.Start = "echo 'x" }), []string{c0 + ".start: not valid shell"}},
		{"nothing asserted", Check{Start: "./app", Steps: []Step{{Click: "Save"}}}, []string{c0 + ": needs at least one assertion: expect_text or a wait_text step"}},
		{"two actions", with(func(c *Check) { c.Steps[0].Key = "Return" }), []string{c0 + ".steps[0]: must have exactly one action (click, click_at, type, key, wait_text or screenshot), got 2"}},
		{"no action", with(func(c *Check) { c.Steps = append(c.Steps, Step{}) }), []string{c0 + ".steps[3]: must have exactly one action", "got 0"}},
		{"blank click", with(func(c *Check) { c.Steps[0].Click = "  " }), []string{c0 + ".steps[0].click: must name the text to click"}},
		{"click off screen", with(func(c *Check) { c.Steps[0] = Step{ClickAt: &Point{X: 1024, Y: 10}} }), []string{c0 + ".steps[0].click_at: (1024, 10) is off the 1024x768 screen"}},
		{"click negative", with(func(c *Check) { c.Steps[0] = Step{ClickAt: &Point{X: 5, Y: -1}} }), []string{"is off the"}},
		{"type with selector", with(func(c *Check) { c.Steps[0] = Step{Type: &TypeStep{Selector: "#a", Text: "x"}} }), []string{c0 + ".steps[0].type.selector: a desktop has no selectors"}},
		{"type nothing", with(func(c *Check) { c.Steps[0] = Step{Type: &TypeStep{}} }), []string{c0 + ".steps[0].type.text: is required"}},
		{"bad key", with(func(c *Check) { c.Steps[0] = Step{Key: "Return ctrl+"} }), []string{c0 + `.steps[0].key: "ctrl+" is not a key`}},
		{"key with shell", with(func(c *Check) { c.Steps[0] = Step{Key: "a;rm"} }), []string{`"a;rm" is not a key`}},
		{"bad wait_text", with(func(c *Check) { c.Steps[1].WaitText = "(" }), []string{c0 + ".steps[1].wait_text: not a valid Go regular expression"}},
		{"bad expect_text", with(func(c *Check) { c.ExpectText = "[" }), []string{c0 + ".expect_text: not a valid Go regular expression"}},
		{"expect_text anything", with(func(c *Check) { c.ExpectText = ".*" }), []string{`expect_text ".*" matches any text`}},
		{"size too small", with(func(c *Check) { c.Width = 100 }), []string{c0 + ".width: must be 0 (the default, 1024x768) or 200 to 4096 pixels, got 100"}},
		{"size too large", with(func(c *Check) { c.Height = 5000 }), []string{c0 + ".height: must be 0"}},
		{"tmux step", with(func(c *Check) { c.Steps[0] = Step{Keys: "a Enter"} }), []string{c0 + ".steps[0].keys: not used by desktop steps (they use: click, click_at, type, key, wait_text, screenshot)"}},
		{"browser field", with(func(c *Check) { c.URL = "http://localhost:1/" }), []string{c0 + ".url: not used by the desktop channel"}},
		{"desktop step in browser", Check{Start: "./srv", URL: "http://localhost:1/", ExpectText: "x", Steps: []Step{{Key: "Return"}}}, []string{".steps[0].key: not used by browser steps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := ChannelDesktop
			if tt.name == "desktop step in browser" {
				ch = ChannelBrowser
			}
			ps := withCheck(ch, tt.c).Validate()
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			all := strings.Join(got, "\n")
			if len(tt.want) == 0 && len(ps) > 0 {
				t.Fatalf("want valid, got:\n%s", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("want a problem with %q, got:\n%s", w, all)
				}
			}
		})
	}
}

func TestDesktopInput(t *testing.T) {
	for _, s := range []Step{{Click: "a"}, {ClickAt: &Point{}}, {Type: &TypeStep{Text: "a"}}, {Key: "Return"}} {
		if !DesktopInput(s) {
			t.Errorf("DesktopInput(%+v) = false", s)
		}
	}
	for _, s := range []Step{{WaitText: "a"}, {Screenshot: true}} {
		if DesktopInput(s) {
			t.Errorf("DesktopInput(%+v) = true", s)
		}
	}
}
