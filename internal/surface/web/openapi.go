package web

import (
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
)

// bodies are the Go types the API reads and writes, by schema name: the
// handlers decode and encode these, and the OpenAPI document describes
// them by reflection, so the two cannot drift apart.
var bodies = map[string]any{
	"StartRun":      StartRun{},
	"Chat":          Chat{},
	"Started":       Started{},
	"Invocation":    Invocation{},
	"CommandResult": CommandResult{},
	"Error":         apiError{},
	"Event":         event.Event{},
	"SessionCode":   SessionCode{},
	"Session":       Session{},
	"Code":          Code{},
	"Info":          Info{},
}

// printed are the responses that are what an ultra command prints with
// --json; the document points at the command.
var printed = map[string]string{
	"RunList": "ultra runs --json",
	"Status":  "ultra status RUN --json",
	"Goals":   "ultra goals RUN --json",
	"Gate":    "ultra gate show RUN --json",
	"Tasks":   "ultra tasks --json",
	"Doctor":  "ultra doctor --json",
}

// schemaOf describes a Go type as JSON Schema (the subset OpenAPI 3.1
// takes), reading the json tags.
func schemaOf(t reflect.Type) map[string]any {
	if t == reflect.TypeOf(time.Time{}) {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Float64, reflect.Float32:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		props := map[string]any{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s := schemaOf(f.Type)
			if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
				s["description"] = "may be absent"
			}
			props[name] = s
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}

var pathParam = regexp.MustCompile(`\{([a-z]+)(\.\.\.)?\}`)

// Document is the OpenAPI 3.1 document of the routes.
func (s *Server) Document() map[string]any {
	schemas := map[string]any{}
	for name, v := range bodies {
		schemas[name] = schemaOf(reflect.TypeOf(v))
	}
	for name, cmd := range printed {
		schemas[name] = map[string]any{"description": "as " + cmd + " prints it"}
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	errResp := func(what string) map[string]any {
		return map[string]any{"description": what, "content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
	}
	paths := map[string]any{}
	for _, rt := range s.routes {
		op := map[string]any{"operationId": rt.id, "summary": rt.summary}
		if rt.open {
			op["security"] = []any{}
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			doc := "the run's id, or a unique prefix of it"
			if m[1] == "path" {
				doc = "the evidence file's path under the run's evidence: GOAL/CRITERION/LABEL/NAME"
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": doc, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.doc, "schema": map[string]any{"type": q.typ}})
		}
		if rt.resp == "events" {
			params = append(params, map[string]any{"name": "Last-Event-ID", "in": "header",
				"description": "the id of the last event received: the stream resumes after it", "schema": map[string]any{"type": "string"}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.body != "" {
			op["requestBody"] = map[string]any{"required": rt.body != "Invocation",
				"content": map[string]any{"application/json": map[string]any{"schema": ref(rt.body)}}}
		}
		status := rt.status
		if status == 0 {
			status = http.StatusOK
		}
		var content map[string]any
		switch rt.resp {
		case "events":
			content = map[string]any{"text/event-stream": map[string]any{"schema": map[string]any{"type": "string",
				"description": "Server-Sent Events: id is the resumption point, data an Event as JSON; comment lines are heartbeats"}}}
		case "file":
			content = map[string]any{"image/png": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}},
				"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
		case "text":
			content = map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
		default:
			content = map[string]any{"application/json": map[string]any{"schema": ref(rt.resp)}}
		}
		responses := map[string]any{}
		responses[strconv.Itoa(status)] = map[string]any{"description": http.StatusText(status), "content": content}
		if rt.command != "" && rt.method == "POST" {
			responses["202"] = map[string]any{"description": "the command goes on with the run in its own process; its events are the run's stream",
				"content": map[string]any{"application/json": map[string]any{"schema": ref("CommandResult")}}}
		}
		responses["400"] = errResp("bad input: the message names the field or flag")
		responses["401"] = errResp("no token, or a wrong one")
		if strings.Contains(rt.path, "{id}") {
			responses["404"] = errResp("no such run")
		}
		if rt.command != "" || rt.method == "POST" || rt.resp == "RunList" || rt.resp == "Tasks" || rt.resp == "Gate" || rt.resp == "Doctor" {
			responses["409"] = errResp("the ultra command refused (exit 3) or failed (exit 1, such as a model server that does not answer): error says why, exit is its exit code")
		}
		op["responses"] = responses
		if rt.command != "" {
			op["x-ultra-command"] = "/" + rt.command
		}
		item, _ := paths[docPath(rt.path)].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[docPath(rt.path)] = item
		}
		item[strings.ToLower(rt.method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "ultra", "version": s.o.Version,
			"description": "The HTTP surface of ultra serve: the same commands as the command line, and the runs' events as Server-Sent Events."},
		"servers":    []any{map[string]any{"url": "/"}},
		"security":   []any{map[string]any{"bearer": []any{}}},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas, "securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}
}

// docPath is a route's path as OpenAPI writes it: {path...} is {path}.
func docPath(p string) string { return strings.ReplaceAll(p, "...}", "}") }

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Document())
}
