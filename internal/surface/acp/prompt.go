package acp

import (
	"context"
	"fmt"
	"github.com/ultra-dev/ultra/internal/surface/procs"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
)

// PromptText is the text of a prompt's content blocks: text as it is,
// an embedded file's text fenced under its URI, a link as its URI.
// Images and audio are refused: the command line takes neither.
func PromptText(blocks []sdk.ContentBlock) (string, error) {
	var b strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "\n\n<context uri=%q>\n%s\n</context>\n", r.Uri, r.Text)
		case c.Resource != nil:
			return "", fmt.Errorf("an embedded binary resource cannot be sent to ultra: give text")
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, " %s ", c.ResourceLink.Uri)
		case c.Image != nil:
			return "", fmt.Errorf("ultra takes no images in a prompt (promptCapabilities.image is false)")
		case c.Audio != nil:
			return "", fmt.Errorf("ultra takes no audio in a prompt")
		}
	}
	text := strings.TrimSpace(b.String())
	if len(text) > maxPrompt {
		return "", fmt.Errorf("the prompt is %d bytes with its embedded context: ultra takes at most %d in one prompt (an argument of its command); attach fewer or smaller files, or name them and let the model read them", len(text), maxPrompt)
	}
	return text, nil
}

// maxPrompt is the longest prompt passed to ultra's command.
const maxPrompt = procs.MaxArg

// Argv is the command line of a slash command typed in the editor, for
// the session's run (""), as the command table makes it: the same argv
// as every other surface's (the parity test holds it to the CLI).
func Argv(line, run string) ([]string, command.Invocation, error) {
	inv, err := command.Parse(line)
	if err != nil {
		return nil, inv, err
	}
	if !inv.Cmd.On(command.ACP) {
		return nil, inv, fmt.Errorf("/%s is not offered in an editor: %s", inv.Cmd.Name, inv.Cmd.Absent[command.ACP])
	}
	argv, err := inv.CLIArgs(run)
	return argv, inv, err
}

func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, err := PromptText(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s.mu.Lock()
	if s.busy {
		s.mu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"error": errBusy.Error()})
	}
	s.busy = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
		_ = s.save()
	}()
	if text == "" {
		s.say(ctx, "Type a task, a question, or /help.")
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	var reason sdk.StopReason
	if strings.HasPrefix(text, "/") {
		reason = s.slash(ctx, text)
	} else {
		reason = s.message(ctx, text)
	}
	return sdk.PromptResponse{StopReason: reason}, nil
}

// say sends text as the agent's message.
func (s *session) say(ctx context.Context, text string) {
	s.a.send(ctx, s.rec.ID, sdk.UpdateAgentMessageText(event.Printable(text)))
}

// message sends typed text where it belongs, as the TUI does: the next
// question of a chat, guidance for a run that waits, or a new run.
func (s *session) message(ctx context.Context, text string) sdk.StopReason {
	run := s.currentRun()
	status := ""
	if run != "" {
		if row, err := s.proj.Backend.Row(ctx, run); err == nil {
			status = row.Status
		}
	}
	next := s.rec.Axes
	switch {
	case status == "running":
		s.say(ctx, "The run is working; your message was not sent. Cancel pauses it at its next safe point, then send your message as guidance.\n\n")
		return s.follow(ctx, run, nil)
	case run != "" && s.fold != nil && s.fold.Axes.Mode == "chat" && next.Mode == "chat":
		return s.start(ctx, append(append([]string{"chat", "--output", "jsonl"}, s.a.o.Extra...), run, "--", text))
	case resumable(status):
		argv, err := argvOf("resume", run, []string{text}, map[string]string{"run": run})
		if err != nil {
			s.say(ctx, err.Error())
			return sdk.StopReasonEndTurn
		}
		return s.drive(ctx, run, append(argv, "--output", "jsonl"))
	}
	return s.start(ctx, s.newRun(text))
}

// newRun is the command line of a new run of text with the session's
// next axes.
func (s *session) newRun(text string) []string {
	a := s.rec.Axes
	var args []string
	switch a.Mode {
	case "chat", "research":
		args = []string{a.Mode, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}
	case "review":
		args = []string{"review"}
	case "plan":
		args = []string{"plan", "--control", a.Control, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}
	default:
		args = []string{"run", "--mode", a.Mode, "--control", a.Control, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}
	}
	if s.rec.Model != "" && a.Mode != "review" {
		args = append(args, "--model", s.rec.Model)
	}
	args = append(append(args, s.a.o.Extra...), "--output", "jsonl")
	if a.Mode != "review" {
		args = append(args, "--", text)
	}
	return args
}

// start starts a command that starts or continues a run, and follows
// the run.
func (s *session) start(ctx context.Context, argv []string) sdk.StopReason {
	// The run is known once its worktree is made and set up; a cancel
	// meanwhile pauses it once it is known.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Minute)
	defer cancel()
	run, wait, err := s.proj.Backend.Start(sctx, s.withMCP(argv))
	if err != nil {
		s.say(ctx, "could not start: "+err.Error())
		return sdk.StopReasonEndTurn
	}
	s.show(run)
	return s.follow(ctx, run, wait)
}

// drive runs a command that goes on with run (resume, approve, next)
// and follows the run while it does.
func (s *session) drive(ctx context.Context, run string, argv []string) sdk.StopReason {
	argv = s.withMCP(argv)
	done := make(chan struct{})
	var out string
	var code int
	go func() {
		out, code = s.proj.Backend.Exec(context.WithoutCancel(ctx), argv)
		close(done)
	}()
	s.show(run)
	return s.follow(ctx, run, func() (string, int) { <-done; return out, code })
}

// slash runs a slash command of the command table.
func (s *session) slash(ctx context.Context, line string) sdk.StopReason {
	run := s.currentRun()
	argv, inv, err := Argv(line, run)
	if inv.Cmd == nil || !inv.Cmd.On(command.ACP) {
		s.say(ctx, err.Error())
		return sdk.StopReasonEndTurn
	}
	status := ""
	if run != "" {
		if row, err := s.proj.Backend.Row(ctx, run); err == nil {
			status = row.Status
		}
	}
	switch inv.Cmd.Name {
	case "help":
		if len(inv.Args) > 0 {
			if c, ok := command.Lookup(inv.Args[0]); ok {
				s.say(ctx, "```\n"+c.Usage()+"```\n")
				return sdk.StopReasonEndTurn
			}
		}
		s.say(ctx, "```\n"+command.Help()+"```\n")
		return sdk.StopReasonEndTurn
	case "model":
		if len(inv.Args) > 0 {
			s.mu.Lock()
			s.rec.Model = inv.Args[0]
			s.mu.Unlock()
			s.say(ctx, "The next runs use the model "+inv.Args[0]+".")
			return sdk.StopReasonEndTurn
		}
	case "attach":
		row, err := s.proj.Backend.Row(ctx, inv.Args[0])
		if err != nil {
			s.say(ctx, "/attach: "+err.Error())
			return sdk.StopReasonEndTurn
		}
		s.show(row.ID)
		return s.follow(ctx, row.ID, nil)
	case "review", "repair":
		if run == "" || (inv.Cmd.Name == "review" && status != "running") || (inv.Cmd.Name == "repair" && !onRun(status)) {
			args, err := inv.CLIArgs("")
			if err != nil {
				s.say(ctx, err.Error())
				return sdk.StopReasonEndTurn
			}
			return s.start(ctx, append(args, "--output", "jsonl"))
		}
	}
	if inv.Cmd.Axes && !onRun(status) {
		ch, err := inv.AxisChanges()
		if err == nil {
			s.mu.Lock()
			var next = s.rec.Axes
			next, err = next.Steer(ch)
			if err == nil {
				s.rec.Axes = next
			}
			s.mu.Unlock()
		}
		if err != nil {
			s.say(ctx, err.Error())
			return sdk.StopReasonEndTurn
		}
		s.a.send(ctx, s.rec.ID, modeUpdate(s.rec.Axes.Mode))
		s.a.send(ctx, s.rec.ID, configUpdate(s.rec.Axes))
		s.say(ctx, "The next run: "+s.rec.Axes.String())
		return sdk.StopReasonEndTurn
	}
	if err != nil {
		s.say(ctx, err.Error())
		return sdk.StopReasonEndTurn
	}
	if inv.Cmd.Drives && run != "" && command.PrintsEvents(argv) {
		return s.drive(ctx, run, append([]string{argv[0], "--output", "jsonl"}, argv[1:]...))
	}
	out, code := s.proj.Backend.Exec(context.WithoutCancel(ctx), s.withMCP(argv))
	if code != 0 {
		s.say(ctx, fmt.Sprintf("`ultra %s` exited %d:\n\n```\n%s\n```\n", strings.Join(argv, " "), code, procs.FirstLines(out, 40)))
	} else {
		s.say(ctx, "```\n"+strings.TrimRight(out, "\n")+"\n```\n")
	}
	if inv.Cmd.Run && run != "" {
		s.catchUp(ctx, run)
	}
	return sdk.StopReasonEndTurn
}

// catchUp sends the events the command caused (a steer's axis change).
func (s *session) catchUp(ctx context.Context, run string) {
	s.mu.Lock()
	f := s.fold
	s.mu.Unlock()
	if f != nil && f.Run == run {
		_ = s.drain(ctx, f)
	}
}
