package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/hooks"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Research mode: task{prompt} runs a read-only helper in a fresh context,
// and report{title, body} writes the research's report and completes the
// run.
const (
	// HelperMaxTurns is how many model requests one helper may make.
	HelperMaxTurns = 12
	// helperMaxReport bounds the helper's report as the run reads it.
	helperMaxReport = 24 << 10
	// ReportTitleMax is the longest title a report may have, in characters.
	ReportTitleMax = 120
	// ResearchDir is where reports go, relative to the repository.
	ResearchDir = workspace.ResearchDir
	// slugMax bounds the title's part of a report's file name.
	slugMax = 48
)

// helperTools are the tools a helper may have: it only reads.
var helperTools = []string{"read", "glob", "grep", "bash"}

var objectSchema = json.RawMessage(`{"type":"object"}`)

var taskSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"prompt":{"type":"string","description":"The helper's whole brief: it sees nothing of this conversation. Say what to find out, where to look and what to report."},` +
	`"description":{"type":"string","description":"A few words on what the helper does, for the log"}},` +
	`"required":["prompt"],"additionalProperties":false}`)

var reportSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"title":{"type":"string","description":"One line, at most 120 characters"},` +
	`"body":{"type":"string","description":"The report in markdown: findings, evidence (files, lines, commands) and open questions"}},` +
	`"required":["title","body"],"additionalProperties":false}`)

// helperPrompt is a helper's system prompt.
func helperPrompt(workdir string) string {
	return `You are a read-only helper of ultra, a coding agent researching a question about the repository at ` + workdir + `.
You work in a fresh context: the first message is your whole brief. Investigate it with read, glob, grep and read-only bash (ls, cat, git log, …); nothing may change, and commands that could write are refused.
When you know the answer, answer in plain text without calling a tool: that answer is your report, and it goes back to the agent that asked. Report findings with their evidence (files, lines, commands) and say what you could not establish. Be concise and exact.`
}

// taskTool starts a read-only helper with a fresh context (research mode).
func (r *runner) taskTool() tool.Tool {
	return funcTool{spec: llm.ToolSpec{Name: "task", Parameters: taskSchema,
		Description: fmt.Sprintf("Start a read-only helper with a fresh context (read, glob, grep, read-only bash; at most %d turns) and return its report. Use it for an independent sub-question; its prompt is all it knows.", HelperMaxTurns)},
		run: r.runTask}
}

// reportTool ends a research run with its report (research mode).
func (r *runner) reportTool() tool.Tool {
	return funcTool{spec: llm.ToolSpec{Name: "report", Parameters: reportSchema,
		Description: "End the research with its report: ultra writes it to " + ResearchDir + "/ in the repository and the run completes."},
		run: r.runReport}
}

// helperTask is what one task call asks.
type helperTask struct {
	Prompt      string `json:"prompt"`
	Description string `json:"description"`
}

func (r *runner) runTask(ctx context.Context, args json.RawMessage) tool.Result {
	id := r.callID
	if r.st.Phase.Phase != phase.Researching {
		return r.refuse(llm.ToolCall{ID: id, Name: "task"}, &refusal{layer: LayerPhaseGuard,
			reason: fmt.Sprintf("task starts a research helper, only in researching; the run is in %s", r.st.Phase.Phase)})
	}
	var a helperTask
	if err := strictDecode(args, &a); err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: "invalid arguments for task: " + err.Error() + `. Send task{prompt, description?}`}
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return tool.Result{IsError: true, Malformed: true, Output: `task needs a non-empty prompt: the helper's whole brief`}
	}
	return r.runHelper(ctx, id, a)
}

// helperOffered lists the tools a helper is offered: its own set ∩ the
// phase table ∩ the permission profile.
func (r *runner) helperOffered() []string {
	var out []string
	for _, name := range helperTools {
		if _, ok := r.tools[name]; ok && r.st.Phase.Allows(name) && permits(r.row.Axes, name) {
			out = append(out, name)
		}
	}
	return out
}

// runHelper runs one helper to its report: its own context, the run's
// guard, sandbox, redaction and budgets.
func (r *runner) runHelper(ctx context.Context, taskID string, a helperTask) tool.Result {
	defer r.fireHooks(ctx, hooks.SubagentStop, "", map[string]any{"stop_hook_active": false, "task_id": taskID})
	offered := r.helperOffered()
	specs := make([]llm.ToolSpec, 0, len(offered))
	for _, name := range offered {
		specs = append(specs, r.tools[name].Spec())
	}
	system := helperPrompt(r.row.Workdir)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: a.Prompt}}
	var notes []string // the helper's texts beside its calls
	var did []string   // the calls it made, in short
	partial := func(why string) tool.Result {
		var b strings.Builder
		b.WriteString("The helper did not finish: " + why + ".")
		if len(notes) > 0 {
			b.WriteString("\nWhat it wrote so far:\n" + strings.Join(notes, "\n\n"))
		}
		if len(did) > 0 {
			b.WriteString("\nThe calls it made:\n- " + strings.Join(did, "\n- "))
		}
		if len(notes) == 0 && len(did) == 0 {
			b.WriteString(" It found nothing yet.")
		}
		return tool.Result{IsError: true, Output: helperCut(r.redact(b.String())), Data: map[string]any{"helper_turns": len(did)}}
	}
	turns := 0
	for {
		r.tick()
		switch {
		case ctx.Err() != nil:
			return partial("interrupted")
		case r.stop != nil:
			return partial("the run stopped (" + r.stop.Reason + ")")
		case turns >= HelperMaxTurns:
			return partial(fmt.Sprintf("it used all its %d turns", HelperMaxTurns))
		}
		if _, reason, ok := r.st.Phase.Exhausted(); ok {
			return partial("the run's budget ran out: " + reason)
		}
		turns++
		reminder := fmt.Sprintf("<ultra-reminder>\n[ultra] read-only helper: turn %d of %d; tools: %s (bash: read-only commands only). Answer without a tool call when you know: that answer is your report.%s\n</ultra-reminder>",
			turns, HelperMaxTurns, strings.Join(offered, ", "), strings.TrimRight("\n"+r.sandboxNote(), "\n"))
		req := llm.Request{Model: r.modelFor(), System: system, Messages: append(slices.Clone(msgs), llm.Message{Role: llm.RoleUser, Content: reminder}),
			Tools: specs, MaxTokens: r.o.MaxTokens}
		turn := r.st.Phase.Used.Turns + 1
		r.emit(event.ModelRequest, event.ModelRequestData{Turn: turn, Model: req.Model, Tools: offered, Messages: len(req.Messages)})
		start := r.o.Now()
		resp, aside, err := r.streamModel(ctx, req)
		took := r.o.Now().Sub(start)
		if aside {
			// A person's request could not wait: it is taken now, and
			// the helper's turn is asked again if the run goes on.
			r.safePoint(ctx)
			turns--
			continue
		}
		if err != nil {
			r.emit(event.ModelResponse, event.ModelResponseData{Turn: turn, Model: req.Model, Duration: took.String(),
				Error: &event.ModelError{Provider: r.o.ProviderName, Message: err.Error()}})
			if ctx.Err() != nil {
				return partial("interrupted")
			}
			return partial("its model request failed: " + err.Error())
		}
		model, cost := r.countUsage(req, resp, turn)
		r.emit(event.ModelResponse, event.ModelResponseData{Turn: turn, Model: model, Usage: event.Usage(resp.Usage), Cost: cost,
			StopReason: resp.StopReason, ToolCalls: len(resp.ToolCalls), Duration: took.String()})
		calls := normaliseCalls(resp.ToolCalls, turn, r.callIDs())
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: historyCalls(calls), Thinking: resp.Thinking})
		text := strings.TrimSpace(resp.Text)
		if len(calls) == 0 {
			if text != "" {
				return tool.Result{Output: helperCut(r.redact(text)), Data: map[string]any{"helper_turns": turns}}
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "Your answer was empty. Call a tool, or answer with your report in plain text."})
			continue
		}
		if text != "" {
			notes = append(notes, r.redact(text))
		}
		for _, c := range calls {
			res := r.helperCall(ctx, taskID, c)
			did = append(did, r.redact(c.Name+" "+event.Truncate(canonicalArgs(c.Arguments), 160)))
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: resultText(res), IsError: res.IsError})
		}
	}
}

// helperCall guards and runs one call of a helper, as the run's own calls
// are: the same guard (with the helper's narrower tool set in front), the
// same sandbox, the same redaction. Its events carry the call id
// "<task call id>/<helper call id>".
func (r *runner) helperCall(ctx context.Context, taskID string, c llm.ToolCall) tool.Result {
	marked := llm.ToolCall{ID: taskID + "/" + c.ID, Name: c.Name, Arguments: c.Arguments}
	r.emit(event.ToolCall, event.ToolCallData{CallID: marked.ID, Tool: c.Name, Args: rawArgs(c.Arguments)})
	start := time.Now()
	var res tool.Result
	switch {
	case ctx.Err() != nil:
		res = tool.Result{IsError: true, Output: "interrupted before this call ran"}
	case r.stop != nil:
		res = tool.Result{IsError: true, Output: "not run: the run stopped (" + r.stop.Reason + ")"}
	default:
		// A helper's calls are the run's calls: requests are taken
		// between them, and in manual control each waits for a person.
		r.safePoint(ctx)
		if r.stop != nil {
			res = tool.Result{IsError: true, Output: "not run: the run stopped (" + r.stop.Reason + ")"}
			break
		}
		ref := r.helperCheck(c)
		if ref == nil {
			waits := r.asksAPerson(marked)
			var ok bool
			if res, ok = r.approved(ctx, marked); !ok {
				break
			}
			if waits {
				ref = r.helperCheck(c) // the axes may have changed while it waited
			}
		}
		if ref != nil {
			res = r.refuse(marked, ref)
			if ref.layer == LayerSafety {
				r.escalate(phase.BySystem, StatusEscalated, "a destructive action needs a person's confirmation: "+ref.reason)
			}
		} else {
			res = r.runOne(ctx, c)
		}
	}
	res.Output = r.redact(res.Output)
	details := map[string]any{"helper_of": taskID}
	for k, v := range res.Data {
		details[k] = v
	}
	r.emit(event.ToolResult, event.ToolResultData{CallID: marked.ID, Tool: c.Name, IsError: res.IsError, Malformed: res.Malformed,
		Output: event.Truncate(res.Output, 2000), Details: details, Duration: time.Since(start).Round(time.Microsecond).String()})
	if res.Malformed {
		r.st.Malformed++
	}
	return res
}

// helperCheck is the run's guard with the helper's tool set in front: a
// helper reads only, and cannot start helpers.
func (r *runner) helperCheck(c llm.ToolCall) *refusal {
	if !slices.Contains(r.helperOffered(), c.Name) {
		if _, ok := r.tools[c.Name]; !ok {
			return &refusal{layer: layerMalformed, reason: fmt.Sprintf("unknown tool %q. A helper's tools: %s", c.Name, strings.Join(r.helperOffered(), ", "))}
		}
		why := ""
		if c.Name == "task" {
			why = " A helper cannot start helpers."
		}
		return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf("tool %q is not offered to a research helper, which only reads: %s.%s",
			c.Name, strings.Join(r.helperOffered(), ", "), why)}
	}
	return r.check(c)
}

// countUsage adds one model answer to the run's counters (turns, tokens,
// cost) and returns the model that answered and the answer's cost.
func (r *runner) countUsage(req llm.Request, resp *llm.Response, turn int) (string, float64) {
	u := &r.st.Phase.Used
	u.Turns = turn
	if resp.Usage.InputTokens == 0 && resp.Usage.OutputTokens == 0 {
		resp.Usage = estimateUsage(req, resp)
	}
	u.InputTokens += resp.Usage.InputTokens
	u.OutputTokens += resp.Usage.OutputTokens
	r.st.Usage.CacheReadTokens += resp.Usage.CacheReadTokens
	r.st.Usage.CacheWriteTokens += resp.Usage.CacheWriteTokens
	model := resp.Model
	if model == "" {
		model = req.Model
	}
	cost := 0.0
	if price, ok := llm.PriceOf(model, r.o.Pricing); ok {
		cost = llm.Cost(price, resp.Usage, r.o.ProviderName == "openai")
	}
	u.Cost += cost
	if r.worker() != nil {
		r.o.pool.report(r.row.ID, *u)
	}
	return model, cost
}

// helperCut bounds a helper's report as the run reads it.
func helperCut(s string) string {
	if len(s) <= helperMaxReport {
		return s
	}
	return event.Truncate(s, helperMaxReport) + fmt.Sprintf("\n[ultra cut the helper's report at %d KiB of %d]", helperMaxReport>>10, (len(s)+1023)>>10)
}

// strictDecode decodes one JSON object into v, refusing unknown fields
// and anything after the object.
func strictDecode(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Report is a research run's report, as the model gives it.
type Report struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// ParseReport validates report{title, body}: a one-line title of at most
// ReportTitleMax characters, a non-empty body, no other fields.
func ParseReport(args json.RawMessage) (Report, error) {
	var rep Report
	if err := strictDecode(args, &rep); err != nil {
		return rep, fmt.Errorf("invalid arguments for report: %w", err)
	}
	rep.Title, rep.Body = strings.TrimSpace(rep.Title), strings.TrimSpace(rep.Body)
	switch n := utf8.RuneCountInString(rep.Title); {
	case n == 0:
		return rep, errors.New("report needs a title: one line that names what was found")
	case n > ReportTitleMax:
		return rep, fmt.Errorf("the report's title has %d characters; at most %d are allowed (put the rest in the body)", n, ReportTitleMax)
	case strings.ContainsAny(rep.Title, "\r\n"):
		return rep, errors.New("the report's title must be one line (put the rest in the body)")
	}
	if rep.Body == "" {
		return rep, errors.New("report needs a body: the findings in markdown, with their evidence")
	}
	if !utf8.ValidString(rep.Title+rep.Body) || strings.ContainsRune(rep.Title+rep.Body, 0) {
		return rep, errors.New("the report must be text (UTF-8, no NUL bytes)")
	}
	return rep, nil
}

// ReportSlug is the title's part of a report's file name: lower-case
// ASCII letters and digits joined by single dashes, at most slugMax
// bytes, "report" when nothing is left.
func ReportSlug(title string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(title) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			if b.Len() >= slugMax {
				break
			}
			b.WriteRune(c)
			continue
		}
		dash = true
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > slugMax {
		s = strings.Trim(s[:slugMax], "-")
	}
	if s == "" {
		return "report"
	}
	return s
}

// ReportName is a report's file name: <YYYYMMDD-HHMMSS>-<slug>.md, in UTC.
func ReportName(now time.Time, title string) string {
	return now.UTC().Format("20060102-150405") + "-" + ReportSlug(title) + ".md"
}

// reportText is the report file: a small header (the run, the question,
// when), the title and the body.
func reportText(runID, question string, now time.Time, rep Report) []byte {
	q, _ := json.Marshal(strings.TrimSpace(question))
	var b strings.Builder
	// A report is read in terminals (cat): nothing in it may drive one.
	fmt.Fprintf(&b, "---\nrun: %s\nquestion: %s\nwritten: %s\n---\n\n# %s\n\n%s\n", runID, q, now.UTC().Format(time.RFC3339),
		event.Printable(rep.Title), event.Printable(rep.Body))
	return []byte(b.String())
}

// realDir makes dir when it is missing and refuses one that is a
// symbolic link or not a directory: ultra never writes through a link.
func realDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return realDir(dir) // made now, or by someone else meanwhile: check it
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: ultra does not write reports through it", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// writeReport writes a report's file under workdir's .ultra/research/
// (made when missing, never through a link), without overwriting
// another; it returns the file's path relative to workdir.
func writeReport(workdir string, now time.Time, title string, data []byte) (string, error) {
	dir := filepath.Join(workdir, ".ultra")
	if err := realDir(dir); err != nil {
		return "", err
	}
	dir = filepath.Join(workdir, filepath.FromSlash(ResearchDir))
	if err := realDir(dir); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	base := strings.TrimSuffix(ReportName(now, title), ".md")
	for i := 1; i <= 100; i++ {
		name := base + ".md"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.md", base, i)
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			root.Remove(name)
			return "", err
		}
		if err := f.Close(); err != nil {
			root.Remove(name)
			return "", err
		}
		return ResearchDir + "/" + name, nil
	}
	return "", fmt.Errorf("%s: too many reports named %s", dir, base)
}

func (r *runner) runReport(_ context.Context, args json.RawMessage) tool.Result {
	if r.st.Phase.Phase != phase.Researching {
		return r.refuse(llm.ToolCall{ID: r.callID, Name: "report"}, &refusal{layer: LayerPhaseGuard,
			reason: fmt.Sprintf("report ends a research run, only in researching; the run is in %s", r.st.Phase.Phase)})
	}
	rep, err := ParseReport(args)
	if err != nil {
		malformed := strings.HasPrefix(err.Error(), "invalid arguments")
		return tool.Result{IsError: true, Malformed: malformed, Output: err.Error() + `. Send report{title, body}: a one-line title and the report in markdown.`}
	}
	// Only the phase machine completes the run: ask it before writing.
	if _, _, err := r.st.Phase.Transition(phase.Complete, phase.ByModel, "", ""); err != nil {
		return r.refuse(llm.ToolCall{ID: r.callID, Name: "report"}, &refusal{layer: LayerTransition, reason: err.Error()})
	}
	rep.Title, rep.Body = r.redact(rep.Title), r.redact(rep.Body)
	now := r.o.Now()
	rel, err := writeReport(r.row.Workdir, now, rep.Title, reportText(r.row.ID, r.row.Task, now, rep))
	if err != nil {
		// Nothing the model can do fixes the repository's directories.
		r.escalate(phase.BySystem, StatusEscalated, "ultra could not write the research report: "+err.Error()+"; a person must fix it (the report is the run's last report call)")
		return tool.Result{IsError: true, Output: "ultra could not write the report: " + err.Error() + ". The run is escalated to a person."}
	}
	reason := "report written to " + rel
	if err := r.transition(phase.Complete, phase.ByModel, reason, ""); err != nil {
		return r.refuse(llm.ToolCall{ID: r.callID, Name: "report"}, &refusal{layer: LayerTransition, reason: err.Error()})
	}
	r.finish(StatusComplete, reason)
	return tool.Result{Output: "Report written to " + rel + ". The research is complete.",
		Data: map[string]any{"report": rel, "path": filepath.Join(r.row.Workdir, filepath.FromSlash(rel))}}
}
