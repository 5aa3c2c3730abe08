package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
)

// submit takes the input: a slash command, an answer to a prompt, or a
// message (a new task, a question, guidance).
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.unfold(m.input.Value()))
	m.input.Reset()
	m.input.Placeholder = "a task, a question, or /help"
	m.at = pos{item: -1}
	if text == "" {
		return nil
	}
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
		if m.o.Remember != nil {
			m.o.Remember(text)
		}
	}
	m.hpos = len(m.history)
	if call := m.denyCall; call != "" {
		m.denyCall = ""
		return m.act("/deny", "deny", m.sess.Run, []string{text}, flags{"call": call}, true)
	}
	if m.planEdit {
		m.planEdit = false
		return m.act("/resume", "resume", m.sess.Run, []string{text}, flags{"run": m.sess.Run}, true)
	}
	if strings.HasPrefix(text, "/") {
		m.hideAsk = ""
		if name, rest := m.skillNamed(text); name != "" {
			return m.skill(name, rest)
		}
		return m.slash(text)
	}
	return m.message(text)
}

// checkModel says whether the server serves the model a person named,
// from `ultra models --json`.
func (m *Model) checkModel(msg modelMsg) {
	var served struct {
		BaseURL string   `json:"base_url"`
		Models  []string `json:"models"`
	}
	if msg.code != 0 || json.Unmarshal([]byte(msg.out), &served) != nil {
		m.sess.Add(&Item{Kind: KindInfo, Title: "could not ask the model server which models it serves; the next run's preflight checks " + printable(msg.name),
			Body: printable(firstLines(msg.out, 3))})
		return
	}
	if slices.Contains(served.Models, msg.name) {
		return
	}
	m.sess.Add(&Item{Kind: KindError, Title: fmt.Sprintf("the model server at %s does not list %s: runs would stop at their preflight (/model NAME picks another)", printable(served.BaseURL), printable(msg.name)),
		Body: printable("it serves: " + strings.Join(served.Models[:min(len(served.Models), 12)], ", ") + more(len(served.Models)-12))})
}

// more is ", … and N more" for n > 0 left out of a list.
func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", … and %d more", n)
}

// A paste of this many lines or bytes is folded into a placeholder.
const (
	pasteFoldLines = 8
	pasteFoldBytes = 2000
)

// pasteLabel is the placeholder of paste n (counted from 1).
func pasteLabel(n int, text string) string {
	return fmt.Sprintf("[pasted text #%d, %d lines]", n, strings.Count(strings.TrimRight(text, "\n"), "\n")+1)
}

// unfold puts the pasted texts back in place of their placeholders (a
// placeholder the person deleted drops its paste) and forgets them.
func (m *Model) unfold(s string) string {
	for i, p := range m.pastes {
		s = strings.Replace(s, pasteLabel(i+1, p), p, 1)
	}
	m.pastes = nil
	return s
}

// message sends typed text where it belongs: guidance for a run that
// waits, the next question of a chat, or a new run.
func (m *Model) message(text string) tea.Cmd {
	if m.pending > 0 {
		m.notice = "a run is starting; wait for it"
		return nil
	}
	a := m.next
	run := m.sess.Run
	switch {
	case m.live() && m.sess.Waiting != nil:
		m.hideAsk = ""
		m.say("the run waits for your decision on call " + m.sess.Waiting.CallID + ": answer the prompt (d denies it with your words; Up brings your text back)")
		return nil
	case m.live():
		m.say("the run is working: Esc pauses it, then your message goes on as guidance (or /steer its axes)")
		m.input.SetValue(text)
		return nil
	case run != "" && m.sess.Axes.Mode == "chat" && a.Mode == "chat":
		return m.start("chat", append(append([]string{"chat", "--output", "jsonl"}, m.o.Extra...), run, "--", text))
	case run != "" && resumable(m.sess.Status):
		return m.act("/resume", "resume", run, []string{text}, flags{"run": run}, true)
	}
	return m.newRun(a, text)
}

// newRun starts a run of text with axes a, extra flags added (a
// skill's --skill NAME); text may be empty only with a skill.
func (m *Model) newRun(a axes.Axes, text string, extra ...string) tea.Cmd {
	// Flags first, then the text after "--": a task that starts with a
	// dash is still the task.
	var args []string
	switch a.Mode {
	case "chat", "research":
		args = []string{a.Mode, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}
	case "review":
		args = []string{"review"}
		m.sess.Add(&Item{Kind: KindInfo, Title: "a review inspects the working tree's changes; your text is not sent (ultra review takes a run or --base)"})
	case "plan":
		args = append([]string{"plan", "--control", a.Control, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}, m.o.Worktree...)
	default:
		args = append([]string{"run", "--mode", a.Mode, "--control", a.Control, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}, m.o.Worktree...)
	}
	if m.model != "" && a.Mode != "review" {
		args = append(args, "--model", m.model)
	}
	args = append(append(append(args, m.o.Extra...), extra...), "--output", "jsonl")
	if a.Mode != "review" && text != "" {
		args = append(args, "--", text)
	}
	return m.start(event.OneLine(firstNonEmpty(text, strings.Join(extra, " ")), 60), args)
}

// skill starts a run with a skill a person invoked as /NAME [TASK]: a
// build run (a plan when the next run plans), whatever chat or research
// mode the next run has.
func (m *Model) skill(name, text string) tea.Cmd {
	if m.pending > 0 || m.live() {
		m.say("a run is going: /" + name + " starts a new run once it ends (/tasks shows it)")
		return nil
	}
	a := m.next
	if a.Mode != "plan" {
		a.Mode = "build"
	}
	return m.newRun(a, text, "--skill", name)
}

// skillNamed is the person's skill a /NAME line invokes ("" when the word
// is a command, or no skill's name), and the text after it.
func (m *Model) skillNamed(line string) (string, string) {
	word, rest, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if _, isCommand := command.Lookup(word); isCommand {
		return "", ""
	}
	for _, s := range m.o.Skills {
		if s.Name == word {
			return word, strings.TrimSpace(rest)
		}
	}
	return "", ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// complete completes a slash command or an @path mention.
func (m *Model) complete() {
	v := m.input.Value()
	if strings.HasPrefix(v, "/") {
		c := command.CompleteLine(v)
		if !strings.Contains(v, " ") {
			for _, s := range m.o.Skills {
				if strings.HasPrefix("/"+s.Name, v) {
					c = append(c, "/"+s.Name)
				}
			}
		}
		switch len(c) {
		case 0:
			m.notice = "no completion"
		case 1:
			m.input.SetValue(c[0] + " ")
		default:
			p := commonPrefix(c)
			m.input.SetValue(p)
			cut := strings.LastIndexByte(p, ' ') + 1
			var words []string
			for _, x := range c {
				words = append(words, x[cut:])
			}
			m.say(strings.Join(words, "  "))
		}
		return
	}
	i := strings.LastIndexByte(v, '@')
	if i < 0 || strings.ContainsAny(v[i:], " \n") {
		return
	}
	prefix := v[i+1:]
	var c []string
	for _, f := range m.o.Files {
		if strings.HasPrefix(f, prefix) && printable(f) == f && !strings.ContainsAny(f, " \n") {
			c = append(c, f)
			if len(c) == 50 {
				break
			}
		}
	}
	switch len(c) {
	case 0:
		m.notice = "no file starts with " + prefix
	case 1:
		m.input.SetValue(v[:i+1] + c[0] + " ")
	default:
		m.input.SetValue(v[:i+1] + commonPrefix(c))
		m.notice = printable(strings.Join(c[:min(len(c), 8)], "  "))
	}
}

func commonPrefix(ss []string) string {
	p := []rune(ss[0])
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, string(p)) {
			p = p[:len(p)-1]
		}
	}
	return string(p)
}
