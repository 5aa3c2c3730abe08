package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// geminiParams is one generateContent request.
type geminiParams struct {
	contents []*genai.Content
	config   *genai.GenerateContentConfig
}

// geminiSkipSignature is the value Gemini documents for function calls
// whose thought signature was lost (a conversation from another model or
// provider): it lets Gemini 3 models accept them.
var geminiSkipSignature = []byte("skip_thought_signature_validator")

// params maps req onto a generateContent request.
func (p *Gemini) params(req Request, model string) (geminiParams, error) {
	contents, err := geminiContents(req.Messages, p.signature, strings.Contains(model, "gemini-3"))
	if err != nil {
		return geminiParams{}, err
	}
	no := false
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: &no}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			decl, err := geminiFunction(t)
			if err != nil {
				return geminiParams{}, err
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, decl)
		}
		cfg.Tools = []*genai.Tool{tool}
	}
	switch {
	case req.MaxTokens > 0:
		cfg.MaxOutputTokens = int32(min(req.MaxTokens, 1<<30))
	case p.cfg.MaxTokens > 0:
		cfg.MaxOutputTokens = int32(min(p.cfg.MaxTokens, 1<<30))
	}
	return geminiParams{contents: contents, config: cfg}, nil
}

// geminiContents maps the history. Assistant turns become "model" contents
// with their function calls; tool results become function responses, and
// consecutive results travel together in one "user" content, as Gemini
// expects after a turn with parallel calls. signature returns the thought
// signature kept for a call id; when needSignature is set (Gemini 3), the
// first call of a turn without one gets the documented placeholder.
func geminiContents(msgs []Message, signature func(string) []byte, needSignature bool) ([]*genai.Content, error) {
	var out []*genai.Content
	names := map[string]string{} // call id -> tool name, for results without ToolName
	var results *genai.Content   // the open run of tool results
	for i, m := range msgs {
		if m.Role != RoleTool {
			results = nil
		}
		switch m.Role {
		case RoleUser:
			out = append(out, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: m.Content}}})
		case RoleAssistant:
			c := &genai.Content{Role: genai.RoleModel}
			if m.Content != "" {
				c.Parts = append(c.Parts, &genai.Part{Text: m.Content})
			}
			for j, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: geminiArgs(tc.Arguments)}}
				if signature != nil {
					part.ThoughtSignature = signature(tc.ID)
				}
				if part.ThoughtSignature == nil && needSignature && j == 0 {
					part.ThoughtSignature = geminiSkipSignature
				}
				c.Parts = append(c.Parts, part)
			}
			if len(c.Parts) == 0 {
				continue // an empty turn says nothing, and Gemini rejects empty contents
			}
			out = append(out, c)
		case RoleTool:
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			if name == "" {
				return nil, fmt.Errorf("message %d: tool result without a tool name", i)
			}
			response := map[string]any{"output": m.Content}
			if m.IsError {
				response = map[string]any{"error": m.Content}
			}
			part := &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: name, Response: response}}
			if results == nil {
				results = &genai.Content{Role: genai.RoleUser}
				out = append(out, results)
			}
			results.Parts = append(results.Parts, part)
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// geminiArgs parses a call's arguments. Gemini wants an object; anything
// else (invalid JSON the model once produced, an array) is sent as {}.
func geminiArgs(s string) map[string]any {
	args := map[string]any{}
	if err := json.Unmarshal([]byte(s), &args); err != nil || args == nil {
		return map[string]any{}
	}
	return args
}

// geminiFunction maps a tool spec to a function declaration carrying its
// JSON Schema as is (parametersJsonSchema). An empty schema becomes an
// object schema without properties.
func geminiFunction(t ToolSpec) (*genai.FunctionDeclaration, error) {
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		schema = nil
		if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
			if err == nil {
				err = fmt.Errorf("null")
			}
			return nil, fmt.Errorf("tool %q: parameters are not a JSON object: %v", t.Name, err)
		}
	}
	return &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema}, nil
}
