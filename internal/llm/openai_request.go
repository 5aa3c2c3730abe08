package llm

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
)

// params maps req onto a Chat Completions request body.
func (p *OpenAI) params(req Request, model string) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: model}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := messageParam(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if req.MaxTokens > 0 {
		if p.cfg.MaxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	return params, nil
}

// messageParam maps one history entry. Tool results travel as their text:
// the wire format has no error flag, so Message.IsError is not sent.
func messageParam(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool result without a tool call id")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: tc.Arguments,
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	default:
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

// toolParam maps a tool spec to a function tool. An empty schema becomes an
// object schema without properties, which every server accepts.
func toolParam(t ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	schema := openai.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		schema = openai.FunctionParameters{}
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object: %v", t.Name, err)
		}
	}
	def := openai.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
	if t.Description != "" {
		def.Description = openai.String(t.Description)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}
