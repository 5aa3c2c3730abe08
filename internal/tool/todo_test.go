package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTodo(t *testing.T) {
	env := newTestEnv(t)
	r := mustOK(t, call(t, Todo{}, env, obj{"todos": []obj{
		{"content": "Explore", "status": "completed"},
		{"content": "Implement", "status": "in_progress"},
		{"content": "Test", "status": "pending", "id": "t"},
	}}))
	want := "Todo list (1/3 completed):\n[x] Explore\n[>] Implement  (in progress)\n[ ] Test"
	if r.Output != want {
		t.Fatalf("got %q", r.Output)
	}
	items := env.Todos.Items()
	if len(items) != 3 || items[0].ID != "1" || items[1].ID != "2" || items[2].ID != "t" || items[1].Status != TodoInProgress {
		t.Fatalf("items %+v", items)
	}

	// Two in progress: refused, list unchanged.
	r = mustErr(t, call(t, Todo{}, env, obj{"todos": []obj{
		{"content": "A", "status": "in_progress"},
		{"content": "B", "status": "in_progress"},
	}}), "at most one")
	if r.Malformed {
		t.Fatal("two in_progress is not a malformed call")
	}
	if len(env.Todos.Items()) != 3 {
		t.Fatal("list changed by a refused call")
	}

	// Lenient: the list as a JSON string, numeric ids, status spellings.
	mustOK(t, call(t, Todo{}, env, obj{"todos": `[{"content":"A","status":"done","id":7},{"content":"B","status":"in-progress"}]`}))
	items = env.Todos.Items()
	if items[0].ID != "7" || items[0].Status != TodoCompleted || items[1].Status != TodoInProgress {
		t.Fatalf("items %+v", items)
	}

	for _, bad := range []string{
		`{}`,
		`{"todos": 3}`,
		`{"todos": [{"status": "pending"}]}`,
		`{"todos": [{"content": "x"}]}`,
		`{"todos": [{"content": "x", "status": "someday"}]}`,
	} {
		r := call(t, Todo{}, env, bad)
		if !r.Malformed {
			t.Fatalf("%s: not malformed: %+v", bad, r)
		}
	}
	mustErr(t, call(t, Todo{}, env, obj{"todos": []obj{{"content": "  ", "status": "pending"}}}), "no content")
	mustErr(t, call(t, Todo{}, env, obj{"todos": []obj{{"content": "a", "status": "pending", "id": "x"}, {"content": "b", "status": "pending", "id": "x"}}}), "twice")

	r = mustOK(t, call(t, Todo{}, env, obj{"todos": []obj{}}))
	contains(t, r.Output, "empty")
}

func TestTodoListJSON(t *testing.T) {
	l := NewTodoList()
	if err := l.Set([]TodoItem{{Content: "a", Status: TodoPending}, {Content: "b", Status: "done"}}); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"status":"completed"`) {
		t.Fatalf("json %s", b)
	}
	var back TodoList
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Items(); len(got) != 2 || got[1].Content != "b" || got[0].ID != "1" {
		t.Fatalf("round trip %+v", got)
	}
	if err := l.Set([]TodoItem{{Content: "a", Status: TodoInProgress}, {Content: "b", Status: TodoInProgress}}); err == nil {
		t.Fatal("two in progress accepted")
	}
	empty, _ := json.Marshal(NewTodoList())
	if string(empty) != "[]" {
		t.Fatalf("empty list json %s", empty)
	}
}
