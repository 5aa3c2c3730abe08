package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/store"
)

// route is one API operation: how it is served and how the OpenAPI
// document describes it (both are made from this one table).
type route struct {
	method, path string
	id           string // operationId
	summary      string
	query        []param
	body         string // the request body's schema ("" none)
	resp         string // the success response's schema; "events" for a stream, "text" for plain text
	status       int    // the success status (default 200)
	command      string // the command of the table it carries out, if any
	open         bool   // needs no token (the trade of a one-time code)
	handle       http.HandlerFunc
}

// Info is the answer of GET /api/info.
type Info struct {
	Project string `json:"project"` // the repository's folder name
	Root    string `json:"root"`    // its path
	Version string `json:"version"`
}

// param is a query parameter.
type param struct {
	name, typ, doc string
}

// pageOnly are the commands of the web surface that the page carries out
// itself, with no API operation of their own.
var pageOnly = map[string]string{
	"attach": "the page watches a run by opening it (GET /api/runs/{id}/events)",
	"clear":  "clears the transcript on the page",
	"help":   "lists the commands on the page",
}

// reads are the commands whose API operation is a GET of what the
// command prints with --json (or as text), and the route that serves it.
var reads = map[string]string{
	"status": "GET /api/runs/{id}",
	"goals":  "GET /api/runs/{id}/goals",
	"diff":   "GET /api/runs/{id}/diff",
	"tasks":  "GET /api/tasks",
	"model":  "GET /api/models",
}

// api is the route table.
func (s *Server) api() []route {
	rs := []route{
		{method: "POST", path: "/api/session", id: "session", open: true,
			summary: "Trade the one-time code of the address ultra serve printed for a session token (the page does this); the code is spent",
			body:    "SessionCode", resp: "Session", status: http.StatusCreated, handle: s.session},
		{method: "POST", path: "/api/codes", id: "newCode",
			summary: "A one-time code that opens the page in another browser (the address is path, from the server's root)",
			resp:    "Code", status: http.StatusCreated, handle: s.newCode},
		{method: "GET", path: "/api/info", id: "info", summary: "Which repository this server serves, and ultra's version", resp: "Info",
			handle: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, Info{Project: s.o.Project, Root: s.o.Root, Version: s.o.Version})
			}},
		{method: "GET", path: "/api/runs", id: "listRuns", summary: "The runs, newest first (ultra runs --json)",
			query: []param{{"limit", "integer", "at most this many (default 50)"}}, resp: "RunList",
			handle: func(w http.ResponseWriter, r *http.Request) {
				args := []string{"runs", "--json"}
				if l := r.URL.Query().Get("limit"); l != "" {
					args = append(args, "--limit", l)
				}
				s.readJSON(w, r, args)
			}},
		{method: "POST", path: "/api/runs", id: "startRun", summary: "Start a run, with the arguments of ultra run", body: "StartRun",
			resp: "Started", status: http.StatusCreated, handle: s.startRun},
		{method: "GET", path: "/api/runs/{id}", id: "getRun", command: "status",
			summary: "A run's phase, axes, budgets, plan, gate decisions and last events (ultra status --json)", resp: "Status",
			handle: func(w http.ResponseWriter, r *http.Request) {
				if id, ok := s.runParam(w, r); ok {
					s.readJSON(w, r, []string{"status", id, "--json"})
				}
			}},
		{method: "GET", path: "/api/runs/{id}/goals", id: "getGoals", command: "goals",
			summary: "A run's goals and criteria with their status and evidence (ultra goals --json)", resp: "Goals",
			handle: func(w http.ResponseWriter, r *http.Request) {
				if id, ok := s.runParam(w, r); ok {
					s.readJSON(w, r, []string{"goals", id, "--json"})
				}
			}},
		{method: "GET", path: "/api/runs/{id}/gate", id: "getGate",
			summary: "A run's baseline and every gate decision, signed by ultra (ultra gate show --json)", resp: "Gate",
			handle: func(w http.ResponseWriter, r *http.Request) {
				if id, ok := s.runParam(w, r); ok {
					s.readJSON(w, r, []string{"gate", "show", id, "--json"})
				}
			}},
		{method: "GET", path: "/api/runs/{id}/diff", id: "getDiff", command: "diff",
			summary: "What a run changed against the commit its branch was cut from (ultra diff)",
			query: []param{{"stat", "boolean", "summarise per file"}, {"name-status", "boolean", "list the changed files"},
				{"committed", "boolean", "only the run's commits"}, {"records", "boolean", "ultra's records too"}},
			resp: "text", handle: s.diff},
		{method: "GET", path: "/api/runs/{id}/events", id: "runEvents",
			summary: "A run's events as Server-Sent Events; id is the event's seq, and Last-Event-ID (or ?after=) resumes after it",
			query:   []param{{"after", "string", "send the events after this seq, or latest: only new ones (Last-Event-ID wins)"}}, resp: "events", handle: s.runEvents},
		{method: "GET", path: "/api/runs/{id}/evidence/{path...}", id: "getEvidence",
			summary: "One evidence file of a run's criteria (a screenshot, a transcript, a receipt): the end of its path in ultra goals --json, GOAL/CRITERION/LABEL/NAME; images as images, everything else as plain text",
			resp:    "file", handle: s.evidence},
		{method: "GET", path: "/api/events", id: "allEvents",
			summary: "Every run's events as Server-Sent Events, in the order stored; id is the event's place, and Last-Event-ID (or ?after=) resumes after it",
			query:   []param{{"after", "string", "send the events after this place, or latest: only new ones (Last-Event-ID wins)"}}, resp: "events", handle: s.allEvents},
		{method: "GET", path: "/api/tasks", id: "listTasks", command: "tasks",
			summary: "Every run and session in flight, what it waits for and the next command (ultra tasks --json)",
			query:   []param{{"all", "boolean", "finished runs too"}}, resp: "Tasks",
			handle: func(w http.ResponseWriter, r *http.Request) {
				args := []string{"tasks", "--json"}
				if on(r.URL.Query(), "all") {
					args = append(args, "--all")
				}
				s.readJSON(w, r, args)
			}},
		{method: "GET", path: "/api/approvals", id: "listApprovals",
			summary: "The runs that wait for a person: a plan to accept or a tool call to allow (the rows of ultra tasks that wait)", resp: "Tasks",
			handle: s.approvals},
		{method: "GET", path: "/api/chats", id: "listChats", summary: "The chat sessions (rows of ultra tasks --all in chat mode)", resp: "Tasks",
			handle: s.chats},
		{method: "POST", path: "/api/chats", id: "chat", summary: "Ask a question in a new chat session, or in one that goes on (ultra chat)",
			body: "Chat", resp: "Started", status: http.StatusCreated, handle: s.chat},
		{method: "GET", path: "/api/doctor", id: "getDoctor", command: "doctor", summary: "The health of ultra's state here (ultra doctor --json)", resp: "Doctor",
			handle: func(w http.ResponseWriter, r *http.Request) { s.readJSON(w, r, []string{"doctor", "--json"}) }},
		{method: "GET", path: "/api/models", id: "listModels", command: "model", summary: "The models the server serves (ultra models)", resp: "text",
			handle: func(w http.ResponseWriter, r *http.Request) { s.readText(w, r, []string{"models"}) }},
	}
	// Every other command of the web surface is a POST that carries out
	// its invocation, on a run (POST /api/runs/{id}/NAME) and, when it
	// also works on no run or on none at all, POST /api/commands/NAME.
	for i := range command.Table {
		c := &command.Table[i]
		if !c.On(command.Web) || c.CLI == nil || pageOnly[c.Name] != "" || reads[c.Name] != "" {
			continue
		}
		if c.Run {
			rs = append(rs, route{method: "POST", path: "/api/runs/{id}/" + c.Name, id: opID(c.Name, "Run"), command: c.Name,
				summary: c.Summary + " (/" + c.Name + ")", body: "Invocation", resp: "CommandResult", handle: s.invoke(c, true)})
		}
		if !c.Run || c.RunOptional {
			rs = append(rs, route{method: "POST", path: "/api/commands/" + c.Name, id: opID(c.Name, ""), command: c.Name,
				summary: c.Summary + " (/" + c.Name + ")", body: "Invocation", resp: "CommandResult", handle: s.invoke(c, false)})
		}
	}
	return rs
}

// opID is an operationId: "permission-profile" on a run is permissionProfileRun.
func opID(name, suffix string) string {
	parts := strings.Split(name, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "") + suffix
}

// on says a query switch is set: ?stat, ?stat=true or ?stat=1.
func on(q url.Values, name string) bool {
	if !q.Has(name) {
		return false
	}
	v := q.Get(name)
	b, err := strconv.ParseBool(v)
	return v == "" || err == nil && b
}

// runParam resolves the run the path names (an id or a unique prefix).
func (s *Server) runParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !command.LooksLikeRun(id) {
		s.fail(w, http.StatusBadRequest, fmt.Sprintf("%q is not a run id (runs are named like 20261124-091217-b8302f)", id))
		return "", false
	}
	row, err := s.o.Events.Row(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, http.StatusNotFound, "no run "+id+" in this repository (GET /api/runs lists them)")
		return "", false
	}
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return "", false
	}
	return row.ID, true
}

// statusOf maps an ultra command's exit code to an HTTP status.
func statusOf(code int, out string) int {
	switch {
	case code == 0:
		return http.StatusOK
	case code == 2 && (strings.Contains(out, "not found") || strings.Contains(out, "no run ")):
		return http.StatusNotFound
	case code == 2:
		return http.StatusBadRequest
	}
	return http.StatusConflict
}

// readJSON serves what `ultra ARGS` prints as JSON.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, args []string) {
	out, errOut, code := s.o.Commands.Read(r.Context(), args)
	if code != 0 {
		writeJSON(w, statusOf(code, errOut+out), apiError{Error: strings.TrimSpace(firstNonEmpty(errOut, out)), Exit: code})
		return
	}
	if !json.Valid([]byte(out)) {
		s.fail(w, http.StatusInternalServerError, "ultra "+strings.Join(args, " ")+" printed no JSON")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, out)
}

// readText serves what `ultra ARGS` prints.
func (s *Server) readText(w http.ResponseWriter, r *http.Request, args []string) {
	out, errOut, code := s.o.Commands.Read(r.Context(), args)
	if code != 0 {
		writeJSON(w, statusOf(code, errOut+out), apiError{Error: strings.TrimSpace(firstNonEmpty(errOut, out)), Exit: code})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, out)
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runParam(w, r)
	if !ok {
		return
	}
	args := []string{"diff", id}
	q := r.URL.Query()
	for _, f := range []string{"stat", "name-status", "committed", "records"} {
		if on(q, f) {
			args = append(args, "--"+f)
		}
	}
	s.readText(w, r, args)
}

// taskRows reads ultra tasks --json [--all] and keeps the rows keep says.
func (s *Server) taskRows(w http.ResponseWriter, r *http.Request, all bool, keep func(row map[string]any) bool) {
	args := []string{"tasks", "--json"}
	if all {
		args = append(args, "--all")
	}
	out, errOut, code := s.o.Commands.Read(r.Context(), args)
	if code != 0 {
		writeJSON(w, statusOf(code, errOut+out), apiError{Error: strings.TrimSpace(firstNonEmpty(errOut, out)), Exit: code})
		return
	}
	var v struct {
		Tasks []map[string]any `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		s.fail(w, http.StatusInternalServerError, "ultra tasks --json: "+err.Error())
		return
	}
	rows := []map[string]any{}
	for _, row := range v.Tasks {
		if keep(row) {
			rows = append(rows, row)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": rows})
}

func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	s.taskRows(w, r, false, func(row map[string]any) bool {
		return row["class"] == "waiting" && (row["waiting_for"] == "plan" || row["waiting_for"] == "approval")
	})
}

func (s *Server) chats(w http.ResponseWriter, r *http.Request) {
	s.taskRows(w, r, true, func(row map[string]any) bool { return row["mode"] == "chat" })
}

// maxBody is the largest request body read.
const maxBody = 1 << 20

// article is "a string", "an array", "an object".
func article(kind string) string {
	switch kind {
	case "struct", "map":
		kind = "object"
	case "slice":
		kind = "array"
	case "int", "int64", "float64":
		kind = "number"
	}
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// decode reads a JSON body strictly: an unknown field or a second value
// is an error that names it.
func decode(r *http.Request, v any) error {
	if r.ContentLength > maxBody {
		return fmt.Errorf("the body is %d bytes: at most %d (1 MiB)", r.ContentLength, maxBody)
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the request has no JSON body")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("the body is not JSON (at byte %d): %v", se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return fmt.Errorf("the body is %s, where a JSON object is needed", article(te.Value))
			}
			return fmt.Errorf("field %q of the body is %s, where %s is needed", te.Field, article(te.Value), article(te.Type.Kind().String()))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && r.ContentLength < 0 {
			return fmt.Errorf("the body ends too soon, or is over %d bytes (1 MiB)", maxBody)
		}
		if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("the body has an unknown field %s", msg)
		}
		return fmt.Errorf("the body: %v", err)
	}
	if dec.More() {
		return errors.New("the body holds more than one JSON value")
	}
	return nil
}

// flagValues turns a body's flags (strings, booleans, numbers) into a
// command's flag values.
func flagValues(in map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range in {
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool:
			out[k] = strconv.FormatBool(x)
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			kind := "list"
			switch v.(type) {
			case nil:
				kind = "null"
			case map[string]any:
				kind = "object"
			}
			return nil, fmt.Errorf("flag %q is a %s: give a string, a boolean or a number", k, kind)
		}
	}
	return out, nil
}

// cliFlags turns a body's flags into the arguments of ultra run or
// ultra chat, refusing a flag the command does not take or one the API
// sets itself.
func cliFlags(in map[string]any, known map[string]bool, cmd string) ([]string, error) {
	vals, err := flagValues(in)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	slices.Sort(names)
	var args []string
	for _, k := range names {
		name := strings.TrimPrefix(k, "--")
		takes, ok := known[name]
		switch {
		case name == "dir":
			return nil, fmt.Errorf("flag %q: ultra serve works in its own repository; start it in another one for that one's runs", k)
		case name == "output" || name == "output-format" || name == "input-format" || name == "print" || name == "quiet" || name == "verbose":
			return nil, fmt.Errorf("flag %q: the API chooses how ultra %s prints (its events are the stream)", k, cmd)
		case !ok:
			return nil, fmt.Errorf("flag %q: ultra %s has no flag --%s (see ultra %s --help)", k, cmd, name, cmd)
		case takes:
			args = append(args, "--"+name+"="+vals[k])
		default:
			b, err := strconv.ParseBool(vals[k])
			if err != nil {
				return nil, fmt.Errorf("flag %q is a switch: give true or false", k)
			}
			if b {
				args = append(args, "--"+name)
			}
		}
	}
	return args, nil
}
