package scripted

import (
	"encoding/json"
	"strings"
	"time"
)

// LoggedRequest is one request to a chat endpoint, as kept in the log.
type LoggedRequest struct {
	N        int       `json:"n"`         // 1 for the server's first request
	Time     time.Time `json:"time"`      // when it arrived
	Path     string    `json:"path"`      // URL path
	Stream   bool      `json:"stream"`    // it asked for a stream
	Model    string    `json:"model"`     // the model it named
	Tools    []string  `json:"tools"`     // names of the tools it offered, in order
	Messages int       `json:"messages"`  // number of messages, system ones included
	System   string    `json:"system"`    // system (and developer) message text
	LastUser string    `json:"last_user"` // text of the last user message
	// FirstUser is the text of the first user message: what a script's
	// lanes match (the conversation's task).
	FirstUser string `json:"first_user,omitempty"`
	// Lane is the lane whose step answered (its index), -1 for the
	// script's own steps.
	Lane int             `json:"lane"`
	Body json.RawMessage `json:"body"` // the request JSON (a JSON string when it was not JSON)
	Step int             `json:"step"` // index of the step that answered; -1 when none did
}

// chatRequest is the part of a Chat Completions request the server reads.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// summarize fills the descriptive fields of a log entry from a request.
func (r *chatRequest) summarize(e *LoggedRequest) {
	e.Stream, e.Model, e.Messages = r.Stream, r.Model, len(r.Messages)
	e.Tools = make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		e.Tools = append(e.Tools, t.Function.Name)
	}
	var system []string
	for _, m := range r.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, contentText(m.Content))
		case "user":
			e.LastUser = contentText(m.Content)
			if e.FirstUser == "" {
				e.FirstUser = e.LastUser
			}
		}
	}
	e.System = strings.Join(system, "\n\n")
}

// contentText returns the text of a message content: a string, or an
// array of parts whose text parts are joined by newlines.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// rawBody keeps a body as JSON when it is JSON, else as a JSON string.
func rawBody(body []byte) json.RawMessage {
	if json.Valid(body) {
		return json.RawMessage(body)
	}
	s, _ := json.Marshal(string(body))
	return s
}
