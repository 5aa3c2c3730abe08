package llm

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go"
)

// params maps req onto a Messages request body, with prompt-caching
// breakpoints on the stable prefix (the system prompt and the tool
// definitions) and on the recent conversation (the last block of the last
// user turn).
func (p *Anthropic) params(req Request, model string) (anthropic.MessageNewParams, error) {
	maxTokens := p.maxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	if req.ThinkingBudget > 0 && maxTokens <= req.ThinkingBudget {
		// The budget counts towards max_tokens, which must exceed it:
		// the answer keeps its own allowance on top of the reasoning.
		maxTokens += req.ThinkingBudget
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: int64(maxTokens)}
	if req.ThinkingBudget > 0 {
		// Temperature is never set: the API rejects it with thinking.
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(req.ThinkingBudget))
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		tool, err := anthropicTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	msgs, err := anthropicMessages(req.Messages)
	if err != nil {
		return params, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != anthropic.MessageParamRoleUser {
			continue
		}
		blocks := msgs[i].Content
		if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
		break
	}
	params.Messages = msgs
	return params, nil
}

// anthropicMessages maps the history onto alternating user and assistant
// turns. Tool results travel in user turns: consecutive results, and a user
// message that follows them, share one user turn.
func anthropicMessages(history []Message) ([]anthropic.MessageParam, error) {
	var out []anthropic.MessageParam
	// user appends blocks to the current user turn, starting one when the
	// last turn is not a user turn.
	user := func(blocks ...anthropic.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.NewUserMessage(blocks...))
	}
	for i, m := range history {
		switch m.Role {
		case RoleUser:
			text := m.Content
			if text == "" {
				text = "(empty message)" // the API rejects empty text blocks
			}
			user(anthropic.NewTextBlock(text))
		case RoleTool:
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("message %d: tool result without a tool call id", i)
			}
			r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Content != "" {
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
			}
			if m.IsError {
				r.IsError = anthropic.Bool(true)
			}
			user(anthropic.ContentBlockParamUnion{OfToolResult: &r})
		case RoleAssistant:
			// Thinking blocks come first and unchanged: the API verifies
			// their signatures and requires them back on the last
			// assistant turn with tool use.
			var blocks []anthropic.ContentBlockParamUnion
			for _, th := range m.Thinking {
				switch {
				case th.Redacted != "":
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(th.Redacted))
				case th.Signature != "" || th.Text != "":
					blocks = append(blocks, anthropic.NewThinkingBlock(th.Signature, th.Text))
				}
			}
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
			}
			if len(blocks) == 0 {
				continue // an empty turn says nothing; the API rejects it
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// toolInput is a call's arguments as the JSON object the API wants back;
// arguments that are not a JSON object (the model may produce anything)
// become {}.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

// anthropicTool maps a tool spec. An empty schema becomes an object schema
// without properties.
func anthropicTool(t ToolSpec) (anthropic.ToolUnionParam, error) {
	schema := anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		var fields map[string]any
		if err := json.Unmarshal(t.Parameters, &fields); err != nil || fields == nil {
			return anthropic.ToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
		}
		if props, ok := fields["properties"]; ok {
			schema.Properties = props
		}
		if req, ok := fields["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					schema.Required = append(schema.Required, s)
				}
			}
		}
		delete(fields, "type")
		delete(fields, "properties")
		delete(fields, "required")
		if len(fields) > 0 {
			schema.ExtraFields = fields
		}
	}
	tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	return anthropic.ToolUnionParam{OfTool: &tool}, nil
}
