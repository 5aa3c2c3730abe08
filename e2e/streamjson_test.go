package e2e

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// ccMessage is a line of claude -p --output-format stream-json, read
// with types of the test's own, from Claude Code's documented shapes.
type ccMessage struct {
	Type           string          `json:"type"`
	Subtype        string          `json:"subtype"`
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	Model          string          `json:"model"`
	Tools          []string        `json:"tools"`
	MCPServers     []any           `json:"mcp_servers"`
	PermissionMode string          `json:"permissionMode"`
	Message        json.RawMessage `json:"message"`
	IsError        *bool           `json:"is_error"`
	NumTurns       *int            `json:"num_turns"`
	DurationMS     *int64          `json:"duration_ms"`
	TotalCostUSD   *float64        `json:"total_cost_usd"`
	Usage          *struct {
		InputTokens  *int64 `json:"input_tokens"`
		OutputTokens *int64 `json:"output_tokens"`
	} `json:"usage"`
	Result *string                    `json:"result"`
	Ultra  map[string]json.RawMessage `json:"ultra"`
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   *bool           `json:"is_error"`
}

// readStream reads a stream-json stdout and checks what Claude Code's
// readers rely on: init first, result last, each session's messages in
// its session, every tool_use answered by a tool_result of its id.
func readStream(t *testing.T, stdout string) []ccMessage {
	t.Helper()
	var msgs []ccMessage
	open := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m ccMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		if m.SessionID == "" {
			t.Fatalf("no session_id: %s", sc.Text())
		}
		var body struct {
			Role    string    `json:"role"`
			Content []ccBlock `json:"content"`
		}
		switch m.Type {
		case "system":
			if m.Subtype != "init" || m.Cwd == "" || m.Model == "" || m.Tools == nil || m.MCPServers == nil || m.PermissionMode == "" {
				t.Fatalf("bad init: %s", sc.Text())
			}
		case "assistant", "user":
			if err := json.Unmarshal(m.Message, &body); err != nil || body.Role != m.Type || len(body.Content) == 0 {
				t.Fatalf("bad %s message: %s", m.Type, sc.Text())
			}
			for _, b := range body.Content {
				switch b.Type {
				case "tool_use":
					if b.ID == "" || b.Name == "" || !json.Valid(b.Input) {
						t.Fatalf("bad tool_use: %s", sc.Text())
					}
					open[b.ID] = true
				case "tool_result":
					if !open[b.ToolUseID] || b.IsError == nil {
						t.Fatalf("tool_result answers no open tool_use: %s", sc.Text())
					}
					delete(open, b.ToolUseID)
				}
			}
		case "result":
			if m.IsError == nil || m.NumTurns == nil || m.DurationMS == nil || m.TotalCostUSD == nil || m.Usage == nil ||
				m.Usage.InputTokens == nil || m.Result == nil || m.Ultra["status"] == nil {
				t.Fatalf("bad result: %s", sc.Text())
			}
			if len(open) > 0 {
				t.Fatalf("tool_use ids never answered: %v", open)
			}
		default:
			t.Fatalf("unknown type: %s", sc.Text())
		}
		if len(msgs) == 0 && m.Type != "system" {
			t.Fatalf("the first message is not init: %s", sc.Text())
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Type != "result" {
		t.Fatalf("the stream does not end with a result:\n%s", stdout)
	}
	return msgs
}

// A build run that completes, as stream-json: tools used and answered,
// a success result with ultra's status and gate beside it.
func TestStreamJSONRunComplete(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, "run", "-p", "--output-format", "stream-json", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "fix calc")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	msgs := readStream(t, res.stdout)
	last := msgs[len(msgs)-1]
	if last.Subtype != "success" || *last.IsError || string(last.Ultra["status"]) != `"complete"` || last.Ultra["gate"] == nil {
		t.Fatalf("result: %+v", last)
	}
	if !strings.Contains(res.stdout, `"name":"edit"`) {
		t.Fatalf("no edit tool_use:\n%s", res.stdout)
	}
	// json: the result object alone, from ultra -p.
	m2 := newModel(t, text("A calculator."))
	r2 := ultra(t, dir, "-p", "--output-format", "json", "--provider", "openai", "--base-url", m2.url, "--model", "scripted", "what is this?")
	var one map[string]any
	if r2.code != 0 || strings.Count(strings.TrimSpace(r2.stdout), "\n") != 0 || json.Unmarshal([]byte(r2.stdout), &one) != nil ||
		one["type"] != "result" || one["result"] != "A calculator." || one["subtype"] != "success" {
		t.Fatalf("json: exit %d %q %s", r2.code, r2.stdout, r2.stderr)
	}
}

// A run that runs out of turns is no success: error_max_turns, is_error,
// ultra's status beside it, and ultra's exit code.
func TestStreamJSONBudgetIsError(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, "run", "--output-format", "json", "--max-turns", "2", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "fix calc")
	var r map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("exit %d %q %s", res.code, res.stdout, res.stderr)
	}
	u, _ := r["ultra"].(map[string]any)
	if res.code != 4 || r["subtype"] != "error_max_turns" || r["is_error"] != true || u["status"] != "budget_exhausted" {
		t.Fatalf("exit %d %s", res.code, res.stdout)
	}
}

// A run that cannot start (the model server is out of reach, a settings
// file does not read) still ends its stream with one result object, an
// error, with the exit code ultra gives.
func TestStreamJSONFailureBeforeTheRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	for _, args := range [][]string{
		{"run", "-p", "--output-format", "stream-json", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "x", "fix calc"},
		{"chat", "-p", "--output-format", "json", "--max-turns", "-1", "what?"},
	} {
		res := ultra(t, dir, args...)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		var r map[string]any
		if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &r) != nil {
			t.Fatalf("%v: exit %d, stdout %q", args, res.code, res.stdout)
		}
		u, _ := r["ultra"].(map[string]any)
		if res.code == 0 || r["type"] != "result" || r["is_error"] != true || r["subtype"] != "error_during_execution" ||
			u["exit_code"] != float64(res.code) || !strings.Contains(res.stderr, r["result"].(string)) {
			t.Fatalf("%v: exit %d, %s\n%s", args, res.code, res.stdout, res.stderr)
		}
	}
}

// Multi-turn input: two user messages, two answers in one session, and
// a non-JSON line is refused by its number. Python's json module reads
// the stream too.
func TestStreamJSONChatInput(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})), text("It subtracts."), text("In calc_test.go."))
	in := `{"type":"user","message":{"role":"user","content":"what does Add do?"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"and its test?"}]}}` + "\n"
	cmd := exec.Command(ultraBin, "chat", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--provider", "openai", "--base-url", m.url, "--model", "scripted")
	cmd.Stdin = strings.NewReader(in)
	res := ultraCmd(t, cmd, dir, ultraEnv(t))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	msgs := readStream(t, res.stdout)
	var results []string
	for _, x := range msgs {
		if x.Type == "result" {
			results = append(results, *x.Result)
			if x.SessionID != msgs[0].SessionID {
				t.Fatal("the second answer is in another session")
			}
		}
	}
	if len(results) != 2 || results[0] != "It subtracts." || results[1] != "In calc_test.go." {
		t.Fatalf("results %q\n%s", results, res.stdout)
	}
	if py, err := exec.LookPath("python3"); err == nil {
		c := exec.Command(py, "-c", `import json,sys
ms=[json.loads(l) for l in sys.stdin if l.strip()]
assert ms[0]["type"]=="system" and ms[0]["subtype"]=="init", ms[0]
assert ms[-1]["type"]=="result" and ms[-1]["is_error"] is False, ms[-1]
print(len(ms))`)
		c.Stdin = strings.NewReader(res.stdout)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("python3: %v\n%s", err, out)
		}
	}
	bad := exec.Command(ultraBin, "chat", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--provider", "openai", "--base-url", m.url, "--model", "scripted")
	bad.Stdin = strings.NewReader("what?\n")
	if r := ultraCmd(t, bad, dir, ultraEnv(t)); r.code != 2 || !strings.Contains(r.stderr, "line 1: not JSON") {
		t.Fatalf("non-JSON line: exit %d %s", r.code, r.stderr)
	}
	if r := ultra(t, dir, "run", "--output-format", "xml", "x"); r.code != 2 || !strings.Contains(r.stderr, `unknown --output-format "xml"`) {
		t.Fatalf("xml: exit %d %s", r.code, r.stderr)
	}
}
