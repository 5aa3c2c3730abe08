package goal

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const schemaPath = "../../docs/goals.schema.json"

// loadSchema reads docs/goals.schema.json.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return s
}

// resolve follows a local $ref.
func resolve(t *testing.T, root, node map[string]any) map[string]any {
	t.Helper()
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		t.Fatalf("unsupported $ref %q", ref)
	}
	def, ok := root["$defs"].(map[string]any)[name].(map[string]any)
	if !ok {
		t.Fatalf("$ref %q: no such definition", ref)
	}
	return def
}

var timeType = reflect.TypeFor[time.Time]()

// TestSchemaMatchesTypes walks goal.File and the types under it beside the
// schema: every JSON field is a property at the same place, with a type
// of the same kind, and every property is a field; required lists exactly
// the fields that are not omitempty; no object allows other properties.
func TestSchemaMatchesTypes(t *testing.T) {
	root := loadSchema(t)
	if root["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", root["$schema"])
	}
	if v := root["properties"].(map[string]any)["version"].(map[string]any)["const"]; v != float64(SchemaVersion) {
		t.Errorf("version const = %v, want %d", v, SchemaVersion)
	}
	seen := map[reflect.Type]bool{}
	var walk func(where string, typ reflect.Type, node map[string]any)
	walk = func(where string, typ reflect.Type, node map[string]any) {
		node = resolve(t, root, node)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		kind, _ := node["type"].(string)
		switch {
		case typ == timeType:
			if kind != "string" || node["format"] != "date-time" {
				t.Errorf("%s: time.Time wants type string, format date-time; got %v", where, node)
			}
		case typ.Kind() == reflect.Struct:
			if kind != "object" {
				t.Errorf("%s: %s wants type object, got %q", where, typ, kind)
			}
			if node["additionalProperties"] != false {
				t.Errorf("%s: %s: additionalProperties must be false", where, typ)
			}
			if seen[typ] {
				return
			}
			seen[typ] = true
			props, _ := node["properties"].(map[string]any)
			var required []string
			for _, r := range anySlice(node["required"]) {
				required = append(required, r.(string))
			}
			var fieldNames, mustRequire []string
			for _, f := range jsonFieldList(typ) {
				fieldNames = append(fieldNames, f.Name)
				if !f.OmitEmpty {
					mustRequire = append(mustRequire, f.Name)
				}
				p, ok := props[f.Name].(map[string]any)
				if !ok {
					t.Errorf("%s: field %s.%s (json %q) is not a property in the schema", where, typ.Name(), typ.Field(f.Index).Name, f.Name)
					continue
				}
				walk(where+"."+f.Name, f.Type, p)
			}
			for name := range props {
				if !slices.Contains(fieldNames, name) {
					t.Errorf("%s: schema property %q is no JSON field of %s", where, name, typ)
				}
			}
			slices.Sort(required)
			slices.Sort(mustRequire)
			for _, r := range required {
				if !slices.Contains(mustRequire, r) {
					t.Errorf("%s: %q is required but the field is omitempty (or absent)", where, r)
				}
			}
			for _, r := range mustRequire {
				if !slices.Contains(required, r) {
					t.Errorf("%s: %q is always written (not omitempty) but not required", where, r)
				}
			}
		case typ.Kind() == reflect.Slice:
			if kind != "array" {
				t.Errorf("%s: %s wants type array, got %q", where, typ, kind)
			}
			items, ok := node["items"].(map[string]any)
			if !ok {
				t.Errorf("%s: array without items", where)
				return
			}
			walk(where+"[]", typ.Elem(), items)
		case typ.Kind() == reflect.Map:
			ap, ok := node["additionalProperties"].(map[string]any)
			if kind != "object" || !ok {
				t.Errorf("%s: %s wants an object with additionalProperties", where, typ)
				return
			}
			walk(where+"{}", typ.Elem(), ap)
		default:
			want := map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer", reflect.Bool: "boolean"}[typ.Kind()]
			if want == "" || kind != want {
				t.Errorf("%s: %s wants type %q, got %q", where, typ, want, kind)
			}
		}
	}
	walk("goals.json", reflect.TypeFor[File](), root)
}

// TestSchemaEnums checks the enums against the Go constants.
func TestSchemaEnums(t *testing.T) {
	root := loadSchema(t)
	defs := root["$defs"].(map[string]any)
	enum := func(def, prop string) []string {
		p := defs[def].(map[string]any)["properties"].(map[string]any)[prop].(map[string]any)
		var out []string
		for _, v := range anySlice(p["enum"]) {
			out = append(out, v.(string))
		}
		return out
	}
	tests := []struct {
		def, prop string
		want      []string
	}{
		{"Goal", "status", []string{string(Pending), string(InProgress), string(Complete), string(Failed), string(Blocked), string(NeedsUserDecision)}},
		{"Criterion", "status", []string{string(CriterionPending), string(CriterionPass), string(CriterionFail), string(CriterionBlocked)}},
		{"Criterion", "userModel", strs(UserModels)},
		{"Criterion", "channel", strs(Channels)},
		{"Check", "method", HTTPMethods},
	}
	for _, tt := range tests {
		if got := enum(tt.def, tt.prop); !slices.Equal(got, tt.want) {
			t.Errorf("%s.%s enum = %v, want %v", tt.def, tt.prop, got, tt.want)
		}
	}
}

// TestSchemaValidatesEncodedFile validates a fully populated File, as
// Encode writes it, against the schema, and a few broken ones.
func TestSchemaValidatesEncodedFile(t *testing.T) {
	root := loadSchema(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := fullFile(now)
	var doc any
	if err := json.Unmarshal(f.Encode(), &doc); err != nil {
		t.Fatal(err)
	}
	if errs := validate(root, root, doc, "$"); len(errs) > 0 {
		t.Fatalf("a full File does not validate:\n%s", strings.Join(errs, "\n"))
	}
	broken := []struct {
		name   string
		mutate func(m map[string]any)
		want   string
	}{
		{"unknown top-level field", func(m map[string]any) { m["extra"] = 1 }, `$: unknown property "extra"`},
		{"missing run", func(m map[string]any) { delete(m, "run") }, `$: missing required "run"`},
		{"bad status", func(m map[string]any) { goal0(m)["status"] = "done" }, `$.goals[0].status: "done" not in enum`},
		{"port as string", func(m map[string]any) { check0(m)["port"] = "80" }, `$.goals[0].successCriteria[0].check.port: want integer`},
		{"unknown check field", func(m map[string]any) { check0(m)["expect_code"] = 0 }, `check: unknown property "expect_code"`},
		{"wrong version", func(m map[string]any) { m["version"] = 2 }, `$.version: want const 1`},
	}
	for _, tt := range broken {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(f.Encode(), &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			b, _ := json.Marshal(m)
			var doc any
			_ = json.Unmarshal(b, &doc)
			errs := validate(root, root, doc, "$")
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tt.want) }) {
				t.Errorf("errors %v do not contain %q", errs, tt.want)
			}
		})
	}
}

func goal0(m map[string]any) map[string]any { return m["goals"].([]any)[0].(map[string]any) }
func check0(m map[string]any) map[string]any {
	return goal0(m)["successCriteria"].([]any)[0].(map[string]any)["check"].(map[string]any)
}

// fullFile is a File with every field set somewhere.
func fullFile(now time.Time) File {
	exit := 0
	later := now.Add(time.Hour)
	digest := Digest([]byte("x"))
	ev := &Evidence{Summary: "exit 0", Files: []EvidenceFile{{Name: "stdout", Path: ".ultra/evidence/1/stdout", SHA256: digest, Bytes: 12}}, Receipt: "r", Tree: "t", Ledger: 4}
	return File{
		Version:  SchemaVersion,
		Run:      "r1",
		Brief:    RunRecords("r1").Brief(),
		Accepted: &Acceptance{By: "person", At: now, Digest: digest, Ledger: 2},
		Goals: []Goal{{
			ID: "G001-cli", Title: "CLI", Objective: "o", Status: InProgress, Attempt: 1,
			CreatedAt: now, StartedAt: &now, UpdatedAt: now, CompletedAt: &later, Commit: "abc", Reason: "r",
			SuccessCriteria: []Criterion{
				{ID: "G001-C1", Scenario: "s", UserModel: Happy, Channel: ChannelHTTP, ExpectedEvidence: "e", Essential: true,
					StopCondition: "3", Status: CriterionFail, CapturedEvidence: ev, CapturedAt: &now, LastFailure: "abcd", SameFailures: 2, Superseded: "x",
					Check: Check{Start: "./srv", Port: 8080, Method: "POST", Path: "/a", Headers: map[string]string{"X-A": "1"}, Body: "{}",
						ExpectStatus: 201, ExpectBody: "ok", ExpectJSON: map[string]string{"a.b": "1"}, TimeoutSeconds: 30}},
				{ID: "G001-C2", Scenario: "s", UserModel: Edge, Channel: ChannelCommand, ExpectedEvidence: "e", Status: CriterionPending,
					Check: Check{Run: "go test", ExpectExit: &exit, ExpectStdout: "ok", ExpectStderr: "^$"}},
				{ID: "G001-C3", Scenario: "s", UserModel: Regression, Channel: ChannelTmux, ExpectedEvidence: "e", Status: CriterionPass,
					Check: Check{Start: "./app", Steps: []Step{{Keys: "ls Enter", Expect: "x"}}, Width: 80, Height: 24}},
				{ID: "G001-C4", Scenario: "s", UserModel: Adversarial, Channel: ChannelBrowser, ExpectedEvidence: "e", Status: CriterionBlocked,
					Check: Check{Start: "./srv", URL: "http://localhost:8080/", Steps: []Step{{Click: "#b"}, {Type: &TypeStep{Selector: "#i", Text: "t"}}, {WaitText: "w"}},
						ExpectText: "t", ExpectSelector: "#ok"}},
			},
		}},
		Review: &Review{Rounds: 1, Verdict: "REQUEST_CHANGES", Blockers: []Blocker{{File: "a.go", Line: 3, Reason: "r"}}},
	}
}

// validate is a small JSON Schema validator for the keywords the goals
// schema uses: $ref, type, const, enum, properties, required,
// additionalProperties, items, minimum, maximum, pattern and format
// date-time.
func validate(root, node map[string]any, v any, where string) []string {
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		node = root["$defs"].(map[string]any)[name].(map[string]any)
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, where+": "+fmt.Sprintf(format, args...)) }
	if c, ok := node["const"]; ok && !reflect.DeepEqual(c, v) {
		bad("want const %v, got %v", c, v)
	}
	if e, ok := node["enum"]; ok && !slices.Contains(anySlice(e), v) {
		bad("%q not in enum %v", v, e)
	}
	switch node["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("want object, got %T", v)
			return errs
		}
		props, _ := node["properties"].(map[string]any)
		for _, r := range anySlice(node["required"]) {
			if _, ok := m[r.(string)]; !ok {
				bad("missing required %q", r)
			}
		}
		for _, k := range sortedKeys(m) {
			if p, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(root, p, m[k], where+"."+k)...)
				continue
			}
			switch ap := node["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("unknown property %q", k)
				}
			case map[string]any:
				errs = append(errs, validate(root, ap, m[k], where+"."+k)...)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("want array, got %T", v)
			return errs
		}
		for i, e := range a {
			errs = append(errs, validate(root, node["items"].(map[string]any), e, fmt.Sprintf("%s[%d]", where, i))...)
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			bad("want string, got %T", v)
			return errs
		}
		if p, ok := node["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(s) {
			bad("%q does not match %s", s, p)
		}
		if node["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				bad("not a date-time: %v", err)
			}
		}
	case "integer":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			bad("want integer, got %v", v)
			return errs
		}
		if m, ok := node["minimum"].(float64); ok && n < m {
			bad("%v is below %v", n, m)
		}
		if m, ok := node["maximum"].(float64); ok && n > m {
			bad("%v is above %v", n, m)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("want boolean, got %T", v)
		}
	}
	return errs
}

func anySlice(v any) []any {
	a, _ := v.([]any)
	return a
}

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
