// Package streamjson renders a run's event stream in the shapes of
// Claude Code's print mode (claude -p --output-format json|stream-json),
// so scripts built on those read ultra unchanged: a system init message,
// assistant and user messages with Anthropic-style content blocks, and a
// final result. ultra's own facts (the run, its final phase, the gate's
// decision, the goals' criteria) ride in an extra "ultra" field that
// readers of Claude Code's shapes skip. It keeps no state of the agent's:
// everything it prints comes of the events it is given.
package streamjson

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
)

// Format is what the renderer prints.
type Format string

const (
	// Text prints the result's text alone, at the end (claude -p).
	Text Format = "text"
	// JSON prints the result object alone, at the end.
	JSON Format = "json"
	// Stream prints one message per line as things happen.
	Stream Format = "stream-json"
)

// Formats are the values --output-format takes.
var Formats = []string{string(Text), string(JSON), string(Stream)}

// Options are what the events do not say.
type Options struct {
	Format Format
	// Cwd is the init message's cwd when the events name no work
	// directory (a chat session going on says only that it resumed).
	Cwd string
}

// Renderer is an event.Sink writing Claude Code's message shapes.
type Renderer struct {
	mu  sync.Mutex
	w   io.Writer
	opt Options

	run, cwd, model, phase string
	axes                   *axes.Axes
	mcp                    []MCPServer // the run's MCP servers (event.MCP)
	initDone               bool
	start                  time.Time
	apiTime                time.Duration
	turn                   int
	usage                  Usage
	stopReason             string
	lastText, answer       string
	open                   []string // tool_use ids not yet answered
	gate                   *Gate
	goals                  map[string]map[string]string
	goalOrder              []string
	commit                 *event.CommitData
	review                 string
	done                   bool // the result is written
}

// New returns a renderer writing to w.
func New(w io.Writer, opt Options) *Renderer {
	if opt.Format == "" {
		opt.Format = Stream
	}
	return &Renderer{w: w, opt: opt}
}

// Emit renders one event.
func (r *Renderer) Emit(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.render(e) {
		r.write(m)
	}
}

// Done says the renderer wrote the result.
func (r *Renderer) Done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// Fail writes the result of a run that ended before its events could
// (a flag, the configuration, the model server out of reach): an
// error_during_execution carrying msg, so that a reader of print mode
// gets its result object whatever happened. Nothing when the result was
// written.
func (r *Renderer) Fail(msg string, exitCode int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	res := Result{Type: "result", Subtype: "error_during_execution", IsError: true, Result: msg, Errors: []string{msg},
		SessionID: r.run, Ultra: Facts{RunID: r.run, Status: "failed", Reason: msg, ExitCode: exitCode}}
	if !r.start.IsZero() {
		res.DurationMS = time.Since(r.start).Milliseconds()
	}
	if r.opt.Format == Text {
		return // the error is on standard error, as claude -p's is
	}
	r.write(res)
}

func (r *Renderer) write(m any) {
	if _, ok := m.(Result); ok {
		r.done = true
	}
	if r.opt.Format == Text {
		if res, ok := m.(Result); ok {
			_, _ = io.WriteString(r.w, event.Printable(strings.TrimRight(res.Result, "\n"))+"\n")
		}
		return
	}
	if _, ok := m.(Result); !ok && r.opt.Format != Stream {
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	_, _ = r.w.Write(append(event.EscapeC1(b), '\n'))
}

// render is the messages one event makes, in order.
func (r *Renderer) render(e event.Event) []any {
	if r.run == "" {
		r.run = e.Run
	}
	if e.Phase != "" {
		r.phase = e.Phase
	}
	var out []any
	switch d := e.Data.(type) {
	case event.RunStartedData:
		r.begin(e)
		r.cwd, r.model = d.Workdir, d.Model
		a := d.Axes
		r.axes = &a
	case event.RunResumedData:
		r.begin(e)
	case event.MCPData:
		r.mcp = nil
		for _, s := range d.Servers {
			r.mcp = append(r.mcp, MCPServer{Name: s.Name, Status: s.State})
		}
	case event.ModelRequestData:
		if r.model == "" {
			r.model = d.Model
		}
		out = append(out, r.init(d.Tools)...)
	case event.ModelResponseData:
		r.turn = d.Turn
		r.stopReason = d.StopReason
		r.usage = usageOf(d.Usage)
		if dur, err := time.ParseDuration(d.Duration); err == nil {
			r.apiTime += dur
		}
	case event.AssistantTextData:
		var blocks []Block
		if d.Thinking != "" {
			blocks = append(blocks, Block{Type: "thinking", Thinking: d.Thinking})
		}
		if strings.TrimSpace(d.Text) != "" {
			r.lastText = d.Text
			blocks = append(blocks, Block{Type: "text", Text: d.Text})
		}
		out = append(out, r.init(nil)...)
		out = append(out, r.assistant(blocks))
	case event.ToolCallData:
		input := d.Args
		if !json.Valid(input) || len(input) == 0 {
			// A model's malformed arguments: the input is an object still.
			s, _ := json.Marshal(map[string]string{"raw": string(d.Args)})
			input = s
		}
		r.open = append(r.open, d.CallID)
		out = append(out, r.init(nil)...)
		out = append(out, r.assistant([]Block{{Type: "tool_use", ID: d.CallID, Name: d.Tool, Input: input}}))
	case event.ToolResultData:
		if r.answered(d.CallID) {
			out = append(out, r.toolResult(d.CallID, d.Output, d.IsError))
		}
	case event.AnswerData:
		r.answer = d.Text
	case event.VerifyResultData:
		r.gate = &Gate{Decision: d.Gate, Status: d.Status, Reason: d.Reason, Passed: d.Passed, Failed: d.Failed, Tree: d.Tree, File: d.GateFile}
	case event.CriterionData:
		if d.Base == "" {
			r.criterion(d)
		}
	case event.CommitData:
		c := d
		r.commit = &c
	case event.ReviewData:
		r.review = d.Verdict
	case event.RunFinishedData:
		out = append(out, r.init(nil)...)
		// Every tool_use is answered, even one the run ended before.
		for _, id := range r.open {
			out = append(out, r.toolResult(id, "no result: the run ended ("+d.Status+")", true))
		}
		r.open = nil
		out = append(out, r.result(e, d))
	}
	return out
}

// begin starts an invocation's clock and its init message (a chat
// session asked again makes a new one, as claude -p --resume does).
func (r *Renderer) begin(e event.Event) {
	r.start = e.Time
	r.initDone = false
	r.apiTime = 0
	r.answer, r.lastText = "", ""
}

// init is the system init message, once per invocation, before anything
// else: with the tools of the first request when there is one.
func (r *Renderer) init(tools []string) []any {
	if r.initDone {
		return nil
	}
	r.initDone = true
	cwd := r.cwd
	if cwd == "" {
		cwd = r.opt.Cwd
	}
	if tools == nil {
		tools = []string{}
	}
	return []any{Init{Type: "system", Subtype: "init", SessionID: r.run, Cwd: cwd, Model: r.model, Tools: tools,
		MCPServers: append([]MCPServer{}, r.mcp...), PermissionMode: permissionMode(r.axes), APIKeySource: "none",
		Ultra: &InitFacts{RunID: r.run, Axes: r.axes}}}
}

// permissionMode is Claude Code's word for the run's axes.
func permissionMode(a *axes.Axes) string {
	if a == nil {
		return "default"
	}
	return a.ClaudePermissionMode()
}

func (r *Renderer) msgID() string {
	return "msg_" + r.run + "_" + itoa(r.turn)
}

func (r *Renderer) assistant(blocks []Block) Assistant {
	var stop *string
	if r.stopReason != "" {
		s := r.stopReason
		stop = &s
	}
	u := r.usage
	return Assistant{Type: "assistant", SessionID: r.run, Ultra: &MsgFacts{Phase: r.phase, Turn: r.turn},
		Message: AssistantMessage{ID: r.msgID(), Type: "message", Role: "assistant", Model: r.model,
			Content: blocks, StopReason: stop, Usage: &u}}
}

func (r *Renderer) toolResult(id, output string, isErr bool) User {
	return User{Type: "user", SessionID: r.run, Ultra: &MsgFacts{Phase: r.phase, Turn: r.turn},
		Message: UserMessage{Role: "user", Content: []Block{{Type: "tool_result", ToolUseID: id, Content: output, IsError: &isErr}}}}
}

// answered takes id off the open tool_use ids; false when it was not
// open (its result was given already).
func (r *Renderer) answered(id string) bool {
	for i, o := range r.open {
		if o == id {
			r.open = append(r.open[:i], r.open[i+1:]...)
			return true
		}
	}
	return false
}

func (r *Renderer) criterion(d event.CriterionData) {
	if r.goals == nil {
		r.goals = map[string]map[string]string{}
	}
	g, ok := r.goals[d.Goal]
	if !ok {
		g = map[string]string{}
		r.goals[d.Goal] = g
		r.goalOrder = append(r.goalOrder, d.Goal)
	}
	g[d.Criterion] = d.Status
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
