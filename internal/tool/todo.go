package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ultra-dev/ultra/internal/llm"
)

// TodoStatus is the state of one todo item.
type TodoStatus string

const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// TodoItem is one entry of the run's todo list.
type TodoItem struct {
	ID      string     `json:"id"`
	Content string     `json:"content"`
	Status  TodoStatus `json:"status"`
}

// TodoList is the run's todo list. It is safe for concurrent use; the
// zero value is an empty list. It marshals to JSON as its items.
type TodoList struct {
	mu    sync.Mutex
	items []TodoItem
}

// NewTodoList returns an empty list.
func NewTodoList() *TodoList { return &TodoList{} }

// Items returns a copy of the items.
func (l *TodoList) Items() []TodoItem {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]TodoItem(nil), l.items...)
}

// Set replaces the whole list. It refuses a list with an empty content,
// an unknown status, duplicate ids or more than one item in progress; items
// without an id get one.
func (l *TodoList) Set(items []TodoItem) error {
	items, err := normalizeTodos(items)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = items
	return nil
}

// MarshalJSON encodes the items.
func (l *TodoList) MarshalJSON() ([]byte, error) {
	items := l.Items()
	if items == nil {
		items = []TodoItem{}
	}
	return json.Marshal(items)
}

// UnmarshalJSON replaces the list with the encoded items.
func (l *TodoList) UnmarshalJSON(b []byte) error {
	var items []TodoItem
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	return l.Set(items)
}

// Render is the compact text form of the list.
func (l *TodoList) Render() string { return renderTodos(l.Items()) }

// ParseTodoStatus accepts the usual spellings of a status ("done",
// "in-progress", "todo", …).
func ParseTodoStatus(s string) (TodoStatus, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer("-", "_", " ", "_").Replace(s)
	switch s {
	case "pending", "todo", "not_started", "open", "":
		return TodoPending, true
	case "in_progress", "inprogress", "active", "doing", "started", "current":
		return TodoInProgress, true
	case "completed", "complete", "done", "finished", "closed":
		return TodoCompleted, true
	}
	return "", false
}

func normalizeTodos(items []TodoItem) ([]TodoItem, error) {
	out := make([]TodoItem, len(items))
	used := map[string]bool{}
	inProgress := 0
	for i, it := range items {
		it.Content = strings.TrimSpace(it.Content)
		it.ID = strings.TrimSpace(it.ID)
		if it.Content == "" {
			return nil, fmt.Errorf("todo %d has no content", i+1)
		}
		st, ok := ParseTodoStatus(string(it.Status))
		if !ok || it.Status == "" {
			if it.Status == "" {
				return nil, fmt.Errorf("todo %d (%q) has no status; use pending, in_progress or completed", i+1, it.Content)
			}
			return nil, fmt.Errorf("todo %d (%q) has unknown status %q; use pending, in_progress or completed", i+1, it.Content, it.Status)
		}
		it.Status = st
		if st == TodoInProgress {
			inProgress++
		}
		if it.ID != "" {
			if used[it.ID] {
				return nil, fmt.Errorf("todo id %q is used twice; ids must be unique", it.ID)
			}
			used[it.ID] = true
		}
		out[i] = it
	}
	if inProgress > 1 {
		return nil, fmt.Errorf("%d todos are in_progress; at most one may be in_progress at a time", inProgress)
	}
	next := 1
	for i := range out {
		if out[i].ID != "" {
			continue
		}
		for used[strconv.Itoa(next)] {
			next++
		}
		out[i].ID = strconv.Itoa(next)
		used[out[i].ID] = true
	}
	return out, nil
}

func renderTodos(items []TodoItem) string {
	if len(items) == 0 {
		return "Todo list is empty."
	}
	done := 0
	for _, it := range items {
		if it.Status == TodoCompleted {
			done++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Todo list (%d/%d completed):", done, len(items))
	for _, it := range items {
		switch it.Status {
		case TodoCompleted:
			b.WriteString("\n[x] ")
		case TodoInProgress:
			b.WriteString("\n[>] ")
		default:
			b.WriteString("\n[ ] ")
		}
		b.WriteString(it.Content)
		if it.Status == TodoInProgress {
			b.WriteString("  (in progress)")
		}
	}
	return b.String()
}

// Todo replaces the run's todo list.
type Todo struct{}

type todoArgs struct {
	Todos json.RawMessage `json:"todos" required:"true"`
}

func (Todo) Spec() llm.ToolSpec {
	item := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"content": prop("string", "Task"),
			"status": map[string]any{
				"type": "string",
				"enum": []string{"pending", "in_progress", "completed"},
			},
			"id": prop("string", "Stable id (optional)"),
		},
		"required":             []string{"content", "status"},
		"additionalProperties": false,
	}
	return llm.ToolSpec{
		Name:        "todo",
		Description: "Replace the run's todo list with the full new list, to track multi-step work. At most one item in_progress; mark items completed when done.",
		Parameters: schema(map[string]any{
			"todos": map[string]any{"type": "array", "items": item},
		}, "todos"),
	}
}

func (Todo) ReadOnly() bool { return false }

func (Todo) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a todoArgs
	if res, ok := decodeArgs("todo", raw, &a); !ok {
		return res
	}
	data := bytes.TrimSpace(a.Todos)
	if len(data) > 0 && data[0] == '"' {
		// Some models send the list as a JSON string.
		var s string
		if err := json.Unmarshal(data, &s); err == nil {
			data = bytes.TrimSpace([]byte(s))
		}
	}
	var rawItems []json.RawMessage
	if err := json.Unmarshal(data, &rawItems); err != nil {
		return malformed("invalid arguments for todo: argument \"todos\" must be an array of {content, status, id?} objects")
	}
	items := make([]TodoItem, 0, len(rawItems))
	for i, r := range rawItems {
		it, err := decodeTodoItem(r)
		if err != nil {
			return malformed("invalid arguments for todo: todos[%d]: %v", i, err)
		}
		items = append(items, it)
	}
	if env == nil || env.Todos == nil {
		return errorf("internal error: the run has no todo list")
	}
	if err := env.Todos.Set(items); err != nil {
		return errorf("todo list not changed: %v", err)
	}
	stored := env.Todos.Items()
	return Result{Output: renderTodos(stored), Data: map[string]any{"todos": stored}}
}

// decodeTodoItem reads one item leniently: the id may be a number and
// content may come as "task" or "title".
func decodeTodoItem(raw json.RawMessage) (TodoItem, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return TodoItem{}, errors.New("must be an object with content and status")
	}
	str := func(keys ...string) (string, bool, error) {
		for _, k := range keys {
			v, ok := m[k]
			if !ok || string(v) == "null" {
				continue
			}
			var s string
			if err := json.Unmarshal(v, &s); err == nil {
				return s, true, nil
			}
			var n json.Number
			if err := json.Unmarshal(v, &n); err == nil && k == "id" {
				return n.String(), true, nil
			}
			return "", true, fmt.Errorf("%q must be a string", k)
		}
		return "", false, nil
	}
	var it TodoItem
	content, ok, err := str("content", "task", "title", "text")
	if err != nil {
		return it, err
	}
	if !ok {
		return it, errors.New(`missing required field "content"`)
	}
	status, ok, err := str("status", "state")
	if err != nil {
		return it, err
	}
	if !ok {
		return it, errors.New(`missing required field "status"`)
	}
	st, valid := ParseTodoStatus(status)
	if !valid {
		return it, fmt.Errorf("unknown status %q; use pending, in_progress or completed", status)
	}
	id, _, err := str("id")
	if err != nil {
		return it, err
	}
	return TodoItem{ID: id, Content: content, Status: st}, nil
}
