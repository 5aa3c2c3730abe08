package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// ResponsesConfig configures an OpenAI Responses API provider.
type ResponsesConfig struct {
	// BaseURL is the API root, "https://api.openai.com/v1" by default.
	// Requests go to BaseURL + "/responses".
	BaseURL string
	// APIKey is sent as a bearer token. The provider never reads OPENAI_*
	// variables itself.
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// Headers are added to every request.
	Headers map[string]string
	// Stream selects streaming (the default, when nil) or one-shot
	// responses.
	Stream *bool
	// HTTPClient replaces the default HTTP client (tests, proxies).
	HTTPClient *http.Client
}

// Responses is a Provider that speaks the OpenAI Responses API
// (POST /responses). Requests are stateless (store: false): the whole
// history travels with every request, and the reasoning items a reasoning
// model returns are sent back, encrypted, before the tool calls of the turn
// that produced them.
type Responses struct {
	cfg     ResponsesConfig
	baseURL string
	stream  bool
	svc     responses.ResponseService

	mu sync.Mutex
	// reasoning holds the reasoning items of a turn that called tools, keyed
	// by the id of the turn's first tool call. Message has no room for them,
	// so they are re-inserted when that call appears in a later request's
	// history.
	reasoning map[string][]responses.ResponseReasoningItemParam
}

var _ Provider = (*Responses)(nil)

// maxKeptReasoning bounds the remembered reasoning turns; the oldest are
// not tracked, so past the bound an arbitrary entry is dropped.
const maxKeptReasoning = 4096

// NewResponses returns a provider for cfg. It does not contact the server.
func NewResponses(cfg ResponsesConfig) (*Responses, error) {
	base, err := providerBaseURL(openAIName, cfg.BaseURL, DefaultOpenAIBaseURL, "")
	if err != nil {
		return nil, err
	}
	// No SDK retries: the caller sees a Retryable *Error and decides.
	opts := openAIOptions(httpClientOr(cfg.HTTPClient), base, 0, cfg.APIKey, cfg.Headers)
	return &Responses{
		cfg:       cfg,
		baseURL:   base,
		stream:    streaming(cfg.Stream),
		svc:       responses.NewResponseService(opts...),
		reasoning: map[string][]responses.ResponseReasoningItemParam{},
	}, nil
}

// Name returns "openai".
func (p *Responses) Name() string { return openAIName }

// Stream sends req and returns the assembled answer, calling onDelta (which
// may be nil) for every fragment. Failures are *Error values, except a
// cancelled or expired ctx, whose error is returned wrapped.
func (p *Responses) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	return dispatch(ctx, openAIName, req, p.cfg.Model, onDelta, p.params, either(p.stream, p.streamed, p.complete))
}

// params maps req onto a Responses request body.
func (p *Responses) params(req Request, model string) (responses.ResponseNewParams, error) {
	params := responses.ResponseNewParams{
		Model: model,
		Store: openai.Bool(false),
	}
	if req.System != "" {
		params.Instructions = openai.String(req.System)
	}
	if encryptedReasoning(model) {
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if req.MaxTokens > 0 {
		params.MaxOutputTokens = openai.Int(int64(req.MaxTokens))
	}
	input := responses.ResponseInputParam{}
	for i, m := range req.Messages {
		items, err := p.inputItems(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
		input = append(input, items...)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	for _, t := range req.Tools {
		tool, err := responsesTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

// inputItems maps one history entry to input items. An assistant turn that
// called tools is preceded by the reasoning items remembered for it.
func (p *Responses) inputItems(m Message) ([]responses.ResponseInputItemUnionParam, error) {
	switch m.Role {
	case RoleUser:
		return []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser),
		}, nil
	case RoleTool:
		if m.ToolCallID == "" {
			return nil, fmt.Errorf("tool result without a tool call id")
		}
		item := responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
		item.OfFunctionCallOutput.CallID = openai.String(m.ToolCallID)
		return []responses.ResponseInputItemUnionParam{item}, nil
	case RoleAssistant:
		var out []responses.ResponseInputItemUnionParam
		if len(m.ToolCalls) > 0 {
			for _, r := range p.reasoningFor(m.ToolCalls[0].ID) {
				out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &r})
			}
		}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" {
				return nil, fmt.Errorf("tool call %q without an id", tc.Name)
			}
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(tc.Arguments, tc.ID, tc.Name))
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown role %q", m.Role)
	}
}

// responsesTool maps a tool spec to a non-strict function tool.
func responsesTool(t ToolSpec) (responses.ToolUnionParam, error) {
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		schema = map[string]any{}
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return responses.ToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object: %v", t.Name, err)
		}
	}
	tool := responses.ToolParamOfFunction(t.Name, schema, false)
	if t.Description != "" {
		tool.OfFunction.Description = openai.String(t.Description)
	}
	return tool, nil
}

// encryptedReasoning reports whether model accepts include:
// ["reasoning.encrypted_content"]: the reasoning models (o-series, gpt-5
// and later, codex). Others (gpt-4o, gpt-4.1, gpt-5-chat) reject it with
// HTTP 400.
func encryptedReasoning(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.Contains(m, "chat"):
		return false
	case len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return true
	case strings.HasPrefix(m, "gpt-") && len(m) > 4 && m[4] >= '5' && m[4] <= '9':
		return true
	case strings.Contains(m, "codex"):
		return true
	}
	return false
}

// remember keeps the reasoning items of a turn whose first tool call is
// callID.
func (p *Responses) remember(callID string, items []responses.ResponseReasoningItemParam) {
	if callID == "" || len(items) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.reasoning) >= maxKeptReasoning {
		for k := range p.reasoning {
			delete(p.reasoning, k)
			break
		}
	}
	p.reasoning[callID] = items
}

func (p *Responses) reasoningFor(callID string) []responses.ResponseReasoningItemParam {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reasoning[callID]
}

// reasoningParam converts a returned reasoning item for sending back. With
// store: false the server keeps nothing, so an item is only useful with its
// encrypted content; one without it would be refused as unknown.
func reasoningParam(item responses.ResponseOutputItemUnion) (responses.ResponseReasoningItemParam, bool) {
	if item.Type != "reasoning" || item.ID == "" || item.EncryptedContent == "" {
		return responses.ResponseReasoningItemParam{}, false
	}
	r := responses.ResponseReasoningItemParam{
		ID:               item.ID,
		Summary:          []responses.ResponseReasoningItemSummaryParam{},
		EncryptedContent: openai.String(item.EncryptedContent),
	}
	for _, s := range item.Summary {
		r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: s.Text})
	}
	return r, true
}

// streamed runs one streaming request.
func (p *Responses) streamed(ctx context.Context, params responses.ResponseNewParams, model string, onDelta func(Delta)) (*Response, error) {
	var failed failedResponse
	stream := p.svc.NewStreaming(ctx, params, option.WithMiddleware(failed.capture))
	defer stream.Close()
	a := newResponsesAssembler(onDelta)
	for stream.Next() {
		if err := a.add(stream.Current()); err != nil {
			return nil, err
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.convertError(ctx, err, &failed, model)
	}
	return p.finish(a)
}

// complete runs one non-streaming request and replays the answer to
// onDelta, one fragment per part.
func (p *Responses) complete(ctx context.Context, params responses.ResponseNewParams, model string, onDelta func(Delta)) (*Response, error) {
	var failed failedResponse
	res, err := p.svc.New(ctx, params, option.WithMiddleware(failed.capture))
	if err != nil {
		return nil, p.convertError(ctx, err, &failed, model)
	}
	if res == nil {
		return nil, &Error{Provider: openAIName, Message: "empty response", Retryable: true}
	}
	a := newResponsesAssembler(onDelta)
	for _, item := range res.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				a.addText(c.Text + c.Refusal)
			}
		case "function_call":
			a.callStarted(item)
			a.callDone(item)
		}
	}
	if err := a.finished(*res); err != nil {
		return nil, err
	}
	return p.finish(a)
}

// finish returns the assembled answer and remembers its reasoning.
func (p *Responses) finish(a *responsesAssembler) (*Response, error) {
	r, err := a.result()
	if err != nil {
		return nil, err
	}
	if len(r.ToolCalls) > 0 {
		p.remember(r.ToolCalls[0].ID, a.reasoning)
	}
	return r, nil
}

// responsesAssembler builds a Response from stream events (or from a whole
// response replayed through the same steps).
type responsesAssembler struct {
	answer
	slots     map[string]int // output item id -> position in calls
	reasoning []responses.ResponseReasoningItemParam
	done      bool
}

func newResponsesAssembler(onDelta func(Delta)) *responsesAssembler {
	return &responsesAssembler{answer: answer{onDelta: onDelta}, slots: map[string]int{}}
}

// add folds one event in. A response.failed or error event ends the
// stream with an *Error.
func (a *responsesAssembler) add(ev responses.ResponseStreamEventUnion) error {
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		a.addText(ev.Delta)
	case "response.output_item.added":
		if ev.Item.Type == "function_call" {
			a.callStarted(ev.Item)
		}
	case "response.function_call_arguments.delta":
		if pos, ok := a.slots[ev.ItemID]; ok && ev.Delta != "" {
			a.calls[pos].Arguments += ev.Delta
			a.onDelta(Delta{Kind: DeltaToolCall, ToolIndex: pos, Text: ev.Delta})
		}
	case "response.output_item.done":
		if ev.Item.Type == "function_call" {
			a.callDone(ev.Item)
		}
	case "response.completed", "response.incomplete":
		return a.finished(ev.Response)
	case "response.failed":
		return failedError(ev.Response.Error.Code, ev.Response.Error.Message)
	case "error":
		return failedError(responses.ResponseErrorCode(ev.Code), ev.Message)
	}
	return nil
}

// callStarted opens a tool call for a function_call output item.
func (a *responsesAssembler) callStarted(item responses.ResponseOutputItemUnion) int {
	if pos, ok := a.slots[item.ID]; ok && item.ID != "" {
		return pos
	}
	pos := a.addCall(ToolCall{ID: item.CallID, Name: item.Name})
	a.slots[item.ID] = pos
	return pos
}

// callDone completes a call from its final item: the arguments there are
// authoritative, and any part not streamed yet is forwarded.
func (a *responsesAssembler) callDone(item responses.ResponseOutputItemUnion) {
	pos, ok := a.slots[item.ID]
	if !ok {
		pos = a.callStarted(item)
	}
	call := &a.calls[pos]
	if call.ID == "" {
		call.ID = item.CallID
	}
	if call.Name == "" {
		call.Name = item.Name
	}
	full := item.Arguments.OfString
	if full == "" || full == call.Arguments {
		return
	}
	if rest, ok := strings.CutPrefix(full, call.Arguments); ok {
		a.onDelta(Delta{Kind: DeltaToolCall, ToolIndex: pos, Text: rest})
	}
	call.Arguments = full
}

// finished takes the final response: status, usage, model and reasoning.
func (a *responsesAssembler) finished(r responses.Response) error {
	switch r.Status {
	case "failed":
		return failedError(r.Error.Code, r.Error.Message)
	case "incomplete":
		a.stop = "length"
		if r.IncompleteDetails.Reason == "content_filter" {
			a.stop = "content_filter"
		}
	default:
		a.stop = "stop"
	}
	if r.JSON.Usage.Valid() {
		a.usage = Usage{
			InputTokens:     r.Usage.InputTokens,
			OutputTokens:    r.Usage.OutputTokens,
			CacheReadTokens: r.Usage.InputTokensDetails.CachedTokens,
		}
		a.haveUsage = true
	}
	a.model = r.Model
	a.reasoning = nil
	for _, item := range r.Output {
		if rp, ok := reasoningParam(item); ok {
			a.reasoning = append(a.reasoning, rp)
		}
	}
	a.done = true
	return nil
}

// result returns the assembled answer. A stream that ended without its
// final event was cut short, so its content cannot be trusted.
func (a *responsesAssembler) result() (*Response, error) {
	if !a.done {
		return nil, &Error{Provider: openAIName, Message: "stream ended before response.completed", Retryable: true}
	}
	if a.stop == "stop" && len(a.calls) > 0 {
		a.stop = "tool_calls"
	}
	return a.response(), nil
}

// failedError converts a response the server gave up on.
func failedError(code responses.ResponseErrorCode, msg string) *Error {
	if msg == "" {
		msg = "the response failed"
	}
	if code != "" {
		msg += " (" + string(code) + ")"
	}
	retry := code == "" || code == "server_error" || code == "rate_limit_exceeded" || code == "vector_store_timeout"
	return &Error{Provider: openAIName, Message: "the server reported an error: " + msg, Retryable: retry}
}

// convertError turns an SDK failure into an *Error; a cancelled or expired
// ctx is returned as such (wrapped).
func (p *Responses) convertError(ctx context.Context, err error, failed *failedResponse, model string) error {
	return openAIError(ctx, err, failed, p.baseURL, model, "/responses")
}
