package goal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

// cmdCrit is a valid command criterion.
func cmdCrit(um UserModel, run, stdout string) ProposedCriterion {
	return ProposedCriterion{
		Scenario: "a user runs " + run, UserModel: um, Channel: ChannelCommand,
		Check:            Check{Run: run, ExpectExit: intp(0), ExpectStdout: stdout},
		ExpectedEvidence: "the output",
	}
}

// validGoal is a goal that passes Validate.
func validGoal(title string) ProposedGoal {
	return ProposedGoal{
		Title: title, Objective: "users can add todos",
		Criteria: []ProposedCriterion{
			cmdCrit(Happy, "./todo add milk && ./todo list", "milk"),
			cmdCrit(Edge, "./todo add ''", "empty"),
			cmdCrit(Regression, "go test ./...", "ok"),
		},
	}
}

func validProposal() Proposal { return Proposal{Goals: []ProposedGoal{validGoal("Add todos")}} }

func TestDecodeProposal(t *testing.T) {
	good := validProposal()
	b, _ := json.Marshal(good)
	twice, _ := json.Marshal(string(b))
	thrice, _ := json.Marshal(string(twice))
	tests := []struct {
		name    string
		raw     string
		wantErr string
	}{
		{"object", string(b), ""},
		{"encoded twice", string(twice), ""},
		{"with white space", "\n  " + string(b) + "\n", ""},
		{"null fields are absent", `{"goals":[{"title":"t","objective":"o","criteria":[{"scenario":"s","user_model":"happy","channel":"command","check":{"run":"x","expect_exit":null,"expect_stdout":null},"expected_evidence":"e","essential":null}]}]}`, ""},
		{"encoded three times", string(thrice), "encoded more than twice"},
		{"unknown field in check", `{"goals":[{"title":"t","objective":"o","criteria":[{}, {"check":{"run":"x","expect_code":0}}]}]}`, `goals[0].criteria[1].check: unknown field "expect_code"`},
		{"unknown field in second goal", `{"goals":[{"title":"t"},{"title":"u","criteria":[{"check":{"expect_code":1}}]}]}`, `goals[1].criteria[0].check: unknown field "expect_code"`},
		{"unknown top-level field", `{"goals":[],"plan":1}`, `(the arguments): unknown field "plan"`},
		{"wrong case", `{"Goals":[]}`, `unknown field "Goals"`},
		{"port as string", `{"goals":[{"criteria":[{"check":{"port":"8080"}}]}]}`, `goals[0].criteria[0].check.port: expected a whole number, got the string "8080"`},
		{"fractional port", `{"goals":[{"criteria":[{"check":{"port":80.5}}]}]}`, `goals[0].criteria[0].check.port: expected a whole number, got 80.5`},
		{"goals not an array", `{"goals":{}}`, `goals: expected an array, got an object`},
		{"essential as string", `{"goals":[{"criteria":[{"essential":"yes"}]}]}`, `goals[0].criteria[0].essential: expected true or false`},
		{"header value a number", `{"goals":[{"criteria":[{"check":{"headers":{"X-A":1}}}]}]}`, `goals[0].criteria[0].check.headers["X-A"]: expected a string`},
		{"unknown step field", `{"goals":[{"criteria":[{"check":{"steps":[{"keys":"a"},{"press":"b"}]}}]}]}`, `goals[0].criteria[0].check.steps[1]: unknown field "press"`},
		{"array at top", `[1]`, `(the arguments): expected an object, got an array`},
		{"null", `null`, "the arguments are null"},
		{"empty", `  `, "the arguments are empty"},
		{"syntax error", "{\"goals\":\n [1,]}", "line 2, column 5: the arguments are not valid JSON"},
		{"truncated", `{"goals":[`, "ends before the JSON value does"},
		{"trailing text", `{"goals":[]} {"goals":[]}`, "unexpected text after the proposal object"},
		{"bad inner string", `"{\"goals\": [}"`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeProposal([]byte(tt.raw))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if len(p.Goals) == 0 {
					t.Fatalf("no goals decoded")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	p, err := DecodeProposal(twice)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(p); string(got) != string(b) {
		t.Errorf("twice-encoded proposal decoded to %s, want %s", got, b)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{"goals[0].criteria[2].check.run", "is required"}, "goals[0].criteria[2].check.run: is required"},
		{Problem{"", "the arguments are empty"}, "the arguments are empty"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if Problems(nil) != nil {
		t.Error("Problems(nil) != nil")
	}
	if got := Problems([]Problem{{"a", "x"}, {"b", "y"}}).Error(); got != "a: x; b: y" {
		t.Errorf("Problems = %q", got)
	}
}

// withCheck returns a valid proposal whose first criterion has channel ch
// and check c.
func withCheck(ch Channel, c Check) Proposal {
	p := validProposal()
	p.Goals[0].Criteria[0].Channel = ch
	p.Goals[0].Criteria[0].Check = c
	return p
}

func TestValidate(t *testing.T) {
	const c0 = "goals[0].criteria[0]"
	httpOK := Check{Start: "./srv", Port: 8080, Path: "/todos", ExpectStatus: 200}
	tmuxOK := Check{Start: "./todo-tui", Steps: []Step{{Keys: "a milk Enter"}, {Expect: "1 item"}}}
	browserOK := Check{Start: "./srv", URL: "http://localhost:8080/", Steps: []Step{{Click: "#add"}, {Type: &TypeStep{Selector: "#t", Text: "milk"}}, {WaitText: "1 item"}}}
	many := Proposal{}
	for i := range MaxGoals + 1 {
		many.Goals = append(many.Goals, validGoal(fmt.Sprint("g", i)))
	}
	tests := []struct {
		name string
		p    Proposal
		want []string // each must be in some problem; none means valid
	}{
		{"valid", validProposal(), nil},
		{"valid http", withCheck(ChannelHTTP, httpOK), nil},
		{"valid http json", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 1, Path: "/", Method: "POST", Body: "{}", Headers: map[string]string{"Content-Type": "application/json"}, ExpectJSON: map[string]string{"items.0.name": "^milk$"}}), nil},
		{"valid tmux", withCheck(ChannelTmux, tmuxOK), nil},
		{"valid browser", withCheck(ChannelBrowser, browserOK), nil},
		{"valid browser 127.0.0.1 selector only", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://127.0.0.1:3000/app?x=1", ExpectSelector: "li.todo:nth-child(1)"}), nil},
		{"no goals", Proposal{}, []string{"goals: at least one goal is required"}},
		{"too many goals", many, []string{"goals: at most 20 goals are allowed, got 21"}},
		{"empty title and objective", Proposal{Goals: []ProposedGoal{{Title: " ", Criteria: validGoal("x").Criteria}}}, []string{"goals[0].title: must not be empty", "goals[0].objective: must not be empty"}},
		{"too few criteria", Proposal{Goals: []ProposedGoal{{Title: "t", Objective: "o", Criteria: validGoal("x").Criteria[:1]}}}, []string{
			"goals[0].criteria: at least 3 criteria are required", `no criterion covers an edge case`, `no criterion covers a regression or adversarial case`}},
		{"adversarial counts", func() Proposal {
			p := validProposal()
			p.Goals[0].Criteria[2].UserModel = Adversarial
			return p
		}(), nil},
		{"no happy path", func() Proposal {
			p := validProposal()
			p.Goals[0].Criteria[0].UserModel = Edge
			return p
		}(), []string{`no criterion covers the happy path (user_model "happy")`}},
		{"unknown user model and channel", func() Proposal {
			p := validProposal()
			p.Goals[0].Criteria[1].UserModel = "sad"
			p.Goals[0].Criteria[1].Channel = "ssh"
			return p
		}(), []string{`goals[0].criteria[1].user_model: unknown value "sad": use one of "happy", "edge", "regression", "adversarial"`, `goals[0].criteria[1].channel: unknown value "ssh"`}},
		{"missing user model", func() Proposal {
			p := validProposal()
			p.Goals[0].Criteria[1].UserModel = ""
			return p
		}(), []string{`goals[0].criteria[1].user_model: is required`}},
		{"empty scenario and evidence", func() Proposal {
			p := validProposal()
			p.Goals[0].Criteria[2].Scenario = ""
			p.Goals[0].Criteria[2].ExpectedEvidence = "  "
			return p
		}(), []string{"goals[0].criteria[2].scenario: must not be empty", "goals[0].criteria[2].expected_evidence: must not be empty"}},
		{"command without run", withCheck(ChannelCommand, Check{ExpectExit: intp(0)}), []string{c0 + ".check.run: is required"}},
		{"command without assertion", withCheck(ChannelCommand, Check{Run: "./todo list"}), []string{c0 + ".check: needs at least one assertion: expect_exit, expect_stdout or expect_stderr"}},
		{"command stderr only is an assertion", withCheck(ChannelCommand, Check{Run: "./todo rm 99", ExpectStderr: "no todo 99"}), nil},
		{"command bad exit", withCheck(ChannelCommand, Check{Run: "./todo", ExpectExit: intp(300)}), []string{c0 + ".check.expect_exit: an exit status is between 0 and 255, got 300"}},
		{"command bad shell", withCheck(ChannelCommand, Check{Run: "./todo 'add", ExpectExit: intp(0)}), []string{c0 + ".check.run: not valid shell"}},
		{"command with http fields", withCheck(ChannelCommand, Check{Run: "./todo", ExpectExit: intp(0), Port: 80, ExpectStatus: 200}), []string{
			c0 + ".check.port: not used by the command channel (command checks use: run, expect_exit, expect_stdout, expect_stderr)", c0 + ".check.expect_status: not used by the command channel"}},
		{"bad pattern", withCheck(ChannelCommand, Check{Run: "./todo", ExpectStdout: "(milk"}), []string{c0 + ".check.expect_stdout: not a valid Go regular expression"}},
		{"bad stderr pattern", withCheck(ChannelCommand, Check{Run: "./todo", ExpectExit: intp(1), ExpectStderr: "[a-"}), []string{c0 + ".check.expect_stderr: not a valid Go regular expression"}},
		{"timeout too long", withCheck(ChannelCommand, Check{Run: "./todo", ExpectExit: intp(0), TimeoutSeconds: 601}), []string{c0 + ".check.timeout_seconds: must be between 0 (the default, 60) and 600, got 601"}},
		{"timeout negative", withCheck(ChannelCommand, Check{Run: "./todo", ExpectExit: intp(0), TimeoutSeconds: -1}), []string{c0 + ".check.timeout_seconds"}},
		{"timeout 600 ok", withCheck(ChannelCommand, Check{Run: "./todo", ExpectExit: intp(0), TimeoutSeconds: 600}), nil},
		{"http missing everything", withCheck(ChannelHTTP, Check{}), []string{
			c0 + ".check.start: is required", c0 + ".check.port: must be the port the server listens on, 1 to 65535, got 0",
			c0 + `.check.path: must start with "/", got ""`, c0 + ".check: needs at least one assertion: expect_status, expect_body or expect_json"}},
		{"http port too high", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 65536, Path: "/", ExpectStatus: 200}), []string{c0 + ".check.port: must be the port the server listens on, 1 to 65535, got 65536"}},
		{"http path without slash", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "todos", ExpectStatus: 200}), []string{c0 + `.check.path: must start with "/", got "todos"`}},
		{"http bad method", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", Method: "get", ExpectStatus: 200}), []string{c0 + `.check.method: unknown method "get": use one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`}},
		{"http bad status", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectStatus: 42}), []string{c0 + ".check.expect_status: an HTTP status is between 100 and 599, got 42"}},
		{"http bad json pattern and path", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectJSON: map[string]string{"a..b": "x", "c": "(("}}), []string{
			c0 + `.check.expect_json["a..b"]: a path is dotted names`, c0 + `.check.expect_json["c"]: not a valid Go regular expression`}},
		{"http bad header", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectStatus: 200, Headers: map[string]string{"Bad Name": "x", "X-Ok": "a\nb"}}), []string{
			c0 + `.check.headers: invalid header name "Bad Name"`, c0 + `.check.headers["X-Ok"]: a header value cannot hold a line break`}},
		{"http with run and steps", withCheck(ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectStatus: 200, Run: "x", Steps: []Step{{Keys: "a"}}}), []string{c0 + ".check.run: not used by the http channel", c0 + ".check.steps: not used by the http channel"}},
		{"tmux without steps", withCheck(ChannelTmux, Check{Start: "./tui"}), []string{c0 + ".check.steps: at least one step is required"}},
		{"tmux without expect", withCheck(ChannelTmux, Check{Start: "./tui", Steps: []Step{{Keys: "q"}}}), []string{c0 + ".check.steps: no step has an expect"}},
		{"tmux empty step", withCheck(ChannelTmux, Check{Start: "./tui", Steps: []Step{{}, {Expect: "x"}}}), []string{c0 + ".check.steps[0]: needs keys, expect or both"}},
		{"tmux browser step", withCheck(ChannelTmux, Check{Start: "./tui", Steps: []Step{{Click: "#a", Expect: "x"}}}), []string{c0 + ".check.steps[0].click: not used by tmux steps (they use: keys, expect)"}},
		{"tmux bad size", withCheck(ChannelTmux, Check{Start: "./tui", Steps: []Step{{Expect: "x"}}, Width: -1, Height: 5000}), []string{c0 + ".check.width: must be 0", c0 + ".check.height: must be 0"}},
		{"tmux bad expect", withCheck(ChannelTmux, Check{Start: "./tui", Steps: []Step{{Expect: "a)"}}}), []string{c0 + ".check.steps[0].expect: not a valid Go regular expression"}},
		{"tmux with url", withCheck(ChannelTmux, Check{Start: "./tui", Steps: []Step{{Expect: "x"}}, URL: "http://localhost:1/"}), []string{c0 + ".check.url: not used by the tmux channel"}},
		{"browser remote url", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "https://example.com/", ExpectText: "x"}), []string{c0 + ".check.url: must be http://localhost:PORT/... or http://127.0.0.1:PORT/..., got \"https://example.com/\""}},
		{"browser url without port", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost/", ExpectText: "x"}), []string{c0 + ".check.url: must be http://localhost:PORT/... or http://127.0.0.1:PORT/... with a port"}},
		{"browser no url", withCheck(ChannelBrowser, Check{Start: "./srv", ExpectText: "x"}), []string{c0 + ".check.url: is required"}},
		{"browser step with two actions", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", Steps: []Step{{Click: "#a", WaitText: "b"}}}), []string{c0 + ".check.steps[0]: must have exactly one action (click, type or wait_text), got 2"}},
		{"browser step with no action", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectText: "x", Steps: []Step{{}}}), []string{c0 + ".check.steps[0]: must have exactly one action (click, type or wait_text), got 0"}},
		{"browser tmux step", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectText: "x", Steps: []Step{{Keys: "a", Click: "#b"}}}), []string{c0 + ".check.steps[0].keys: not used by browser steps"}},
		{"browser type without selector", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectText: "x", Steps: []Step{{Type: &TypeStep{Text: "a"}}}}), []string{c0 + ".check.steps[0].type.selector: is required"}},
		{"browser without assertion", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", Steps: []Step{{Click: "#a"}}}), []string{c0 + ".check: needs at least one assertion: expect_text, expect_selector or a wait_text step"}},
		{"browser bad wait_text", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", Steps: []Step{{WaitText: "*x"}}}), []string{c0 + ".check.steps[0].wait_text: not a valid Go regular expression"}},
		{"browser selector is not a regexp", withCheck(ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectSelector: "ul > li:first-child"}), nil},
		{"trivial check refused with reason", withCheck(ChannelCommand, Check{Run: "echo ok", ExpectStdout: "ok"}), []string{c0 + ".check: cannot fail: run only prints fixed text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := tt.p.Validate()
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if len(tt.want) == 0 && len(ps) > 0 {
				t.Fatalf("unexpected problems:\n%s", strings.Join(got, "\n"))
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) || strings.Contains(g, w) }) {
					t.Errorf("no problem %q in:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

func TestTrivial(t *testing.T) {
	tests := []struct {
		name string
		ch   Channel
		c    Check
		want string // a part of the reason; "" means the check can fail
	}{
		// commands that exercise nothing
		{"true", ChannelCommand, Check{Run: "true", ExpectExit: intp(0)}, "run only prints fixed text or does nothing"},
		{"colon", ChannelCommand, Check{Run: ":", ExpectExit: intp(0)}, "run only prints"},
		{"exit 0", ChannelCommand, Check{Run: "exit 0", ExpectExit: intp(0)}, "run only prints"},
		{"echo", ChannelCommand, Check{Run: `echo "all tests pass"`, ExpectStdout: "pass"}, "run only prints"},
		{"printf", ChannelCommand, Check{Run: `printf '%s\n' done`, ExpectStdout: "done"}, "run only prints"},
		{"heredoc", ChannelCommand, Check{Run: "cat <<EOF\nok\nEOF", ExpectStdout: "ok"}, "run only prints"},
		{"list of inert", ChannelCommand, Check{Run: "cd /tmp && echo a; sleep 1; true", ExpectExit: intp(0)}, "run only prints"},
		{"pipeline of inert", ChannelCommand, Check{Run: "echo a | cat", ExpectStdout: "a"}, "run only prints"},
		{"newlines", ChannelCommand, Check{Run: "X=1\necho $X\n", ExpectExit: intp(0)}, "run only prints"},
		{"subshell of inert", ChannelCommand, Check{Run: "( echo a; true ) || :", ExpectExit: intp(0)}, "run only prints"},
		{"echo of a substitution runs it", ChannelCommand, Check{Run: "echo $(./todo list)", ExpectStdout: "milk"}, ""},
		// help and version
		{"help only", ChannelCommand, Check{Run: "./todo --help", ExpectStdout: "Usage"}, "run only asks the program for --help"},
		{"version piped to grep", ChannelCommand, Check{Run: "go run . --version | grep -q 1.2", ExpectExit: intp(0)}, "--version"},
		{"dry run", ChannelCommand, Check{Run: "cd app && ./deploy --dry-run", ExpectExit: intp(0)}, "--dry-run"},
		{"build then help is real", ChannelCommand, Check{Run: "go build -o todo . && ./todo --help", ExpectStdout: "Usage"}, ""},
		// assertions
		{"no assertion", ChannelCommand, Check{Run: "./todo list"}, "it asserts nothing"},
		{"stdout dot star", ChannelCommand, Check{Run: "./todo list", ExpectStdout: ".*"}, `expect_stdout ".*" matches any text`},
		{"stdout caret", ChannelCommand, Check{Run: "./todo list", ExpectStdout: "^"}, "matches any text"},
		{"stdout dollar", ChannelCommand, Check{Run: "./todo list", ExpectStdout: "$"}, "matches any text"},
		{"stdout dotall", ChannelCommand, Check{Run: "./todo list", ExpectStdout: "(?s).*"}, "matches any text"},
		{"stdout optional", ChannelCommand, Check{Run: "./todo list", ExpectStdout: ".?"}, "matches any text"},
		{"stderr star", ChannelCommand, Check{Run: "./todo list", ExpectExit: intp(0), ExpectStderr: "x*"}, `expect_stderr "x*" matches any text`},
		{"anchored empty is real", ChannelCommand, Check{Run: "./todo list", ExpectStderr: "^$"}, ""},
		{"self printed", ChannelCommand, Check{Run: "./todo add milk; echo ADDED", ExpectStdout: "ADDED"}, `expect_stdout "ADDED" matches text the run prints itself ("ADDED")`},
		{"self printed after &&", ChannelCommand, Check{Run: "./todo add milk && echo 'added: milk'", ExpectStdout: `added: \w+`}, "prints its own assertion"},
		{"self printed to stderr", ChannelCommand, Check{Run: "./todo add || echo failed >&2", ExpectStderr: "fail"}, "expect_stderr"},
		{"self printed heredoc", ChannelCommand, Check{Run: "./todo add milk\ncat <<EOF\nDONE\nEOF", ExpectStdout: "DONE"}, "prints its own assertion"},
		{"echo into pipe is input", ChannelCommand, Check{Run: `echo '{"a":1}' | ./jsonq .a`, ExpectStdout: "1"}, ""},
		{"echo into file is setup", ChannelCommand, Check{Run: "echo milk > in.txt && ./todo import in.txt", ExpectStdout: "milk"}, ""},
		{"program output", ChannelCommand, Check{Run: "./todo add milk && ./todo list", ExpectStdout: "milk"}, ""},
		{"or true with exit 0 only", ChannelCommand, Check{Run: "go test ./... || true", ExpectExit: intp(0)}, "the only assertion is expect_exit 0 but the run always exits 0"},
		{"semicolon exit 0", ChannelCommand, Check{Run: "go test ./...; exit 0", ExpectExit: intp(0)}, "always exits 0"},
		{"semicolon true", ChannelCommand, Check{Run: "go test ./...; true", ExpectExit: intp(0)}, "always exits 0"},
		{"or colon", ChannelCommand, Check{Run: "make test || :", ExpectExit: intp(0)}, "always exits 0"},
		{"trailing echo", ChannelCommand, Check{Run: "make test\necho finished", ExpectExit: intp(0)}, "always exits 0"},
		{"pipe into cat", ChannelCommand, Check{Run: "go test ./... | cat", ExpectExit: intp(0)}, "always exits 0"},
		{"pipefail makes pipe real", ChannelCommand, Check{Run: "set -o pipefail; go test ./... | cat", ExpectExit: intp(0)}, ""},
		{"set -e makes list real", ChannelCommand, Check{Run: "set -e\ngo test ./...\necho finished", ExpectExit: intp(0)}, ""},
		{"set -e does not help or true", ChannelCommand, Check{Run: "set -euo pipefail; go test ./... || true", ExpectExit: intp(0)}, "always exits 0"},
		{"if with echo both ways", ChannelCommand, Check{Run: "if make test; then echo ok; else echo bad; fi", ExpectExit: intp(0)}, "always exits 0"},
		{"exit 0 in the middle", ChannelCommand, Check{Run: "make test; exit 0; make lint", ExpectExit: intp(0)}, "always exits 0"},
		{"or true with stdout assertion is real", ChannelCommand, Check{Run: "./todo list || true", ExpectExit: intp(0), ExpectStdout: "milk"}, ""},
		{"plain exit 0", ChannelCommand, Check{Run: "go test ./...", ExpectExit: intp(0)}, ""},
		{"and true is real", ChannelCommand, Check{Run: "go test ./... && true", ExpectExit: intp(0)}, ""},
		{"exit 1 expected after or true", ChannelCommand, Check{Run: "./todo rm 9 || true", ExpectExit: intp(1)}, ""},
		{"bad shell left to Validate", ChannelCommand, Check{Run: "'", ExpectExit: intp(0)}, ""},
		// http
		{"http status only is real", ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectStatus: 200}, ""},
		{"http body everything", ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectStatus: 200, ExpectBody: ".*"}, `expect_body ".*" matches any text`},
		{"http start echo", ChannelHTTP, Check{Start: "echo listening", Port: 80, Path: "/", ExpectStatus: 200}, "start only prints fixed text"},
		{"http json presence is real", ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/", ExpectJSON: map[string]string{"id": ".*"}}, ""},
		{"http no assertion", ChannelHTTP, Check{Start: "./srv", Port: 80, Path: "/"}, "it asserts nothing"},
		// tmux
		{"tmux real", ChannelTmux, Check{Start: "./tui", Steps: []Step{{Keys: "a milk Enter"}, {Expect: "1 item"}}}, ""},
		{"tmux typed text", ChannelTmux, Check{Start: "./tui", Steps: []Step{{Keys: "'add milk' Enter", Expect: "milk"}}}, `steps[0].expect "milk" matches the keys typed so far`},
		{"tmux typed earlier", ChannelTmux, Check{Start: "./tui", Steps: []Step{{Keys: "hello Space world Enter"}, {Keys: "C-c"}, {Expect: "hello world"}}}, "steps[2].expect"},
		{"tmux key names are not text", ChannelTmux, Check{Start: "./tui", Steps: []Step{{Keys: "C-c Enter"}, {Expect: "Enter"}}}, ""},
		{"tmux everything", ChannelTmux, Check{Start: "./tui", Steps: []Step{{Expect: ".*"}}}, "matches any text"},
		{"tmux start is a help", ChannelTmux, Check{Start: "./tui --help", Steps: []Step{{Expect: "Usage"}}}, "start only asks the program for --help"},
		{"tmux no expect", ChannelTmux, Check{Start: "./tui", Steps: []Step{{Keys: "q"}}}, "it asserts nothing"},
		// browser
		{"browser real", ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectText: "1 item"}, ""},
		{"browser body selector", ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectSelector: "body"}, `expect_selector "body" is on every page`},
		{"browser wait everything", ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", Steps: []Step{{WaitText: "^"}}}, `steps[0].wait_text "^" matches any text`},
		{"browser text everything", ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/", ExpectText: ".*"}, "matches any text"},
		{"browser start true", ChannelBrowser, Check{Start: "true", URL: "http://localhost:1/", ExpectText: "x"}, "start only prints"},
		{"browser no assertion", ChannelBrowser, Check{Start: "./srv", URL: "http://localhost:1/"}, "it asserts nothing"},
		{"unknown channel", "ssh", Check{Run: "true"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Trivial(tt.ch, tt.c)
			if tt.want == "" {
				if got != "" {
					t.Fatalf("Trivial = %q, want the check to be able to fail", got)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("Trivial = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestMatchesEverything(t *testing.T) {
	tests := []struct {
		re   string
		want bool
	}{
		{".*", true}, {"^", true}, {"$", true}, {"", true}, {"(?s).*", true}, {".?", true}, {"a*", true}, {"(?m)^", true}, {"|x", true},
		{"^$", false}, {"ok", false}, {`\d+`, false}, {"(", false}, {".", false}, {"..", false}, {"[a-z]", false}, {"x?", true},
	}
	for _, tt := range tests {
		if got := MatchesEverything(tt.re); got != tt.want {
			t.Errorf("MatchesEverything(%q) = %v, want %v", tt.re, got, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ title, want string }{
		{"Add todos", "add-todos"},
		{"  --Add   TODOs!!  now-- ", "add-todos-now"},
		{"HTTP/2 support (v2)", "http-2-support-v2"},
		{"Über café", "ber-caf"},
		{"", "goal"},
		{"!!!", "goal"},
		{"日本語", "goal"},
		{"a very long title that goes on and on beyond the limit", "a-very-long-title-that-goes-on-a"},
		{"abcdefghijklmnopqrstuvwxyz01234 x", "abcdefghijklmnopqrstuvwxyz01234"},
	}
	for _, tt := range tests {
		got := Slug(tt.title)
		if got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.title, got, tt.want)
		}
		if len(got) > 32 || strings.HasSuffix(got, "-") || strings.HasPrefix(got, "-") {
			t.Errorf("Slug(%q) = %q: too long or dashed at an end", tt.title, got)
		}
	}
}

func TestToGoals(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	no := false
	p := validProposal()
	p.Goals = append(p.Goals, validGoal(" Second goal: HTTP! "))
	p.Goals[1].Criteria[1].Essential = &no
	p.Goals[1].Criteria[0].Channel = ChannelHTTP
	p.Goals[1].Criteria[0].Check = Check{Start: "./srv", Port: 80, Path: "/", ExpectStatus: 200, Headers: map[string]string{"A": "b"}}
	p.Goals[1].Criteria[2].StopCondition = "after two"
	goals := p.ToGoals(now)
	if len(goals) != 2 {
		t.Fatalf("%d goals", len(goals))
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"id 1", goals[0].ID, "G001-add-todos"},
		{"id 2", goals[1].ID, "G002-second-goal-http"},
		{"title trimmed", goals[1].Title, "Second goal: HTTP!"},
		{"status", goals[0].Status, Pending},
		{"attempt", goals[0].Attempt, 0},
		{"created", goals[0].CreatedAt, now},
		{"updated", goals[1].UpdatedAt, now},
		{"criteria ids", []string{goals[1].SuccessCriteria[0].ID, goals[1].SuccessCriteria[2].ID}, []string{"G002-C1", "G002-C3"}},
		{"criterion pending", goals[0].SuccessCriteria[0].Status, CriterionPending},
		{"essential default", goals[0].SuccessCriteria[0].Essential, true},
		{"essential false kept", goals[1].SuccessCriteria[1].Essential, false},
		{"method defaults to GET", goals[1].SuccessCriteria[0].Check.Method, "GET"},
		{"command has no method", goals[0].SuccessCriteria[0].Check.Method, ""},
		{"stop condition default", goals[0].SuccessCriteria[0].StopCondition, defaultStopCondition},
		{"stop condition kept", goals[1].SuccessCriteria[2].StopCondition, "after two"},
		{"user model", goals[0].SuccessCriteria[1].UserModel, Edge},
		{"no evidence", goals[0].SuccessCriteria[0].CapturedEvidence == nil && goals[0].SuccessCriteria[0].CapturedAt == nil, true},
		{"no start time", goals[0].StartedAt == nil, true},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// the goals share nothing with the proposal
	p.Goals[1].Criteria[0].Check.Headers["A"] = "changed"
	*p.Goals[0].Criteria[0].Check.ExpectExit = 7
	if goals[1].SuccessCriteria[0].Check.Headers["A"] != "b" || *goals[0].SuccessCriteria[0].Check.ExpectExit != 0 {
		t.Error("goals share maps or pointers with the proposal")
	}
	if len(Proposal{}.ToGoals(now)) != 0 {
		t.Error("an empty proposal gives goals")
	}
	if goals := (Proposal{Goals: []ProposedGoal{{Title: "t"}}}).ToGoals(now); goals[0].SuccessCriteria == nil {
		t.Error("successCriteria must be an empty array, not null")
	}
}
