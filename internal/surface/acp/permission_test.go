package acp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/event"
)

const run = "20261122-020815-a3f9c1"

// Each answer is the command table's argv: allow_always is a rule for
// the run (--for-run), a reject is a denial the model reads, and a plan
// accepted "always" runs autonomously.
func TestAnswers(t *testing.T) {
	bash := event.ApprovalData{CallID: "call_3", Tool: "bash"}
	goals := event.ApprovalData{CallID: "call_2", Tool: "goals"}
	cases := []struct {
		name string
		got  func() (Answer, error)
		argv [][]string
		deny string
		end  bool
	}{
		{"allow once", func() (Answer, error) { return CallAnswer(run, bash, AllowOnce) }, [][]string{{"approve", run, "--call", "call_3"}}, "", false},
		{"allow always", func() (Answer, error) { return CallAnswer(run, bash, AllowAlways) }, [][]string{{"approve", run, "--call", "call_3", "--for-run"}}, "", false},
		{"reject once", func() (Answer, error) { return CallAnswer(run, bash, RejectOnce) }, [][]string{{"approve", run, "--call", "call_3", "--deny", deniedReason}}, "", false},
		{"reject always", func() (Answer, error) { return CallAnswer(run, bash, RejectAlways) },
			[][]string{{"approve", run, "--call", "call_3", "--for-run", "--deny", deniedReason + " (bash is refused for the rest of this session)"}}, "bash", false},
		{"goals call accepted", func() (Answer, error) { return CallAnswer(run, goals, AllowOnce) }, [][]string{{"approve", run, "--call", "call_2"}}, "", false},
		{"goals call accepted to run autonomously", func() (Answer, error) { return CallAnswer(run, goals, AllowAlways) },
			[][]string{{"approve", run, "--call", "call_2"}, {"autonomous", run, "--reason", "plan accepted from the editor to run autonomously"}}, "", false},
		{"goals call rejected for good", func() (Answer, error) { return CallAnswer(run, goals, RejectAlways) }, [][]string{{"cancel", run, "--reason", "plan rejected in the editor"}}, "", false},
		{"plan accepted", func() (Answer, error) { return PlanAnswer(run, AllowOnce) }, [][]string{{"approve", run}}, "", false},
		{"plan accepted autonomously", func() (Answer, error) { return PlanAnswer(run, AllowAlways) }, [][]string{{"approve", run, "--autonomous"}}, "", false},
		{"plan revised", func() (Answer, error) { return PlanAnswer(run, RejectOnce) }, nil, "", true},
		{"plan rejected", func() (Answer, error) { return PlanAnswer(run, RejectAlways) }, [][]string{{"cancel", run, "--reason", "plan rejected in the editor"}}, "", false},
		{"a refused tool is denied without asking", func() (Answer, error) { return AutoDenied(run, bash) },
			[][]string{{"approve", run, "--call", "call_3", "--deny", deniedReason + " (bash is refused for the rest of this session)"}}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := c.got()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(a.Argv, c.argv, slices.Equal) || a.DenyTool != c.deny || a.EndTurn != c.end {
				t.Fatalf("got %q deny %q end %v", a.Argv, a.DenyTool, a.EndTurn)
			}
		})
	}
	for _, opt := range []string{"", "allow", "yes"} {
		if _, err := CallAnswer(run, bash, opt); err == nil {
			t.Errorf("option %q: no error", opt)
		}
		if _, err := PlanAnswer(run, opt); err == nil {
			t.Errorf("plan option %q: no error", opt)
		}
	}
}

func TestOptionsAreTheFourKinds(t *testing.T) {
	for _, opts := range [][]sdk.PermissionOption{CallOptions(event.ApprovalData{Tool: "bash"}), PlanOptions()} {
		var kinds []string
		for _, o := range opts {
			kinds = append(kinds, string(o.Kind))
			if string(o.OptionId) != string(o.Kind) {
				t.Errorf("option %q of kind %q", o.OptionId, o.Kind)
			}
		}
		if strings.Join(kinds, " ") != "allow_once allow_always reject_once reject_always" {
			t.Errorf("kinds %v", kinds)
		}
	}
}

func TestMCPConfig(t *testing.T) {
	b, err := MCPConfig([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "files", Command: "npx", Args: []string{"-y", "srv"}, Env: []sdk.EnvVariable{{Name: "K", Value: "v"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "docs", Type: "http", Url: "https://example.com/mcp", Headers: []sdk.HttpHeader{{Name: "X", Value: "y"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["mcpServers"]["files"]["command"] != "npx" || doc["mcpServers"]["docs"]["url"] != "https://example.com/mcp" || doc["mcpServers"]["docs"]["type"] != "http" {
		t.Fatalf("%s", b)
	}
	for name, bad := range map[string][]sdk.McpServer{
		"a name ultra refuses":    {{Stdio: &sdk.McpServerStdio{Name: "../x", Command: "a"}}},
		"no command":              {{Stdio: &sdk.McpServerStdio{Name: "a", Command: " "}}},
		"not an http address":     {{Http: &sdk.McpServerHttpInline{Name: "a", Url: "file:///etc/passwd"}}},
		"an ACP server":           {{Acp: &sdk.McpServerAcpInline{Name: "a", Id: "x"}}},
		"twice":                   {{Stdio: &sdk.McpServerStdio{Name: "a", Command: "x"}}, {Stdio: &sdk.McpServerStdio{Name: "a", Command: "y"}}},
		"a credential of ultra's": {{Stdio: &sdk.McpServerStdio{Name: "a", Command: "x", Args: []string{"${OPENAI_API_KEY}"}}}},
		"no type":                 {{}},
	} {
		if _, err := MCPConfig(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPromptText(t *testing.T) {
	txt, err := PromptText([]sdk.ContentBlock{
		sdk.TextBlock("fix this"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///r/a.go", Text: "package a"}}),
	})
	if err != nil || !strings.HasPrefix(txt, "fix this") || !strings.Contains(txt, `<context uri="file:///r/a.go">`) || !strings.Contains(txt, "package a") {
		t.Fatalf("%q %v", txt, err)
	}
	if _, err := PromptText([]sdk.ContentBlock{sdk.ImageBlock("AAAA", "image/png")}); err == nil || !strings.Contains(err.Error(), "image") {
		t.Fatalf("an image: %v", err)
	}
}
