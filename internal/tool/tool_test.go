package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinsSpecs(t *testing.T) {
	var names []string
	for _, tl := range Builtins() {
		s := tl.Spec()
		names = append(names, s.Name)
		if s.Description == "" || len(s.Description) > 300 {
			t.Errorf("%s: description length %d", s.Name, len(s.Description))
		}
		var sch struct {
			Type                 string                    `json:"type"`
			Properties           map[string]map[string]any `json:"properties"`
			Required             []string                  `json:"required"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Parameters, &sch); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		if sch.Type != "object" || sch.AdditionalProperties == nil || *sch.AdditionalProperties {
			t.Errorf("%s: schema %s", s.Name, s.Parameters)
		}
		for _, r := range sch.Required {
			if _, ok := sch.Properties[r]; !ok {
				t.Errorf("%s: required %q not a property", s.Name, r)
			}
		}
		for name, p := range sch.Properties {
			if p["type"] == nil {
				t.Errorf("%s.%s: no type", s.Name, name)
			}
		}
	}
	if got := strings.Join(names, ","); got != "read,write,edit,bash,glob,grep,todo,webfetch" {
		t.Fatalf("builtins %s", got)
	}
	ro := map[string]bool{"read": true, "glob": true, "grep": true}
	for _, tl := range Builtins() {
		if tl.ReadOnly() != ro[tl.Spec().Name] {
			t.Errorf("%s: ReadOnly %v", tl.Spec().Name, tl.ReadOnly())
		}
	}
	props := func(tl Tool) string {
		var sch struct {
			Properties map[string]any `json:"properties"`
		}
		_ = json.Unmarshal(tl.Spec().Parameters, &sch)
		var ks []string
		for k := range sch.Properties {
			ks = append(ks, k)
		}
		return strings.Join(sortStrings(ks), ",")
	}
	want := map[string]string{
		"read":     "file_path,limit,offset",
		"write":    "content,file_path",
		"edit":     "file_path,new_string,old_string,replace_all",
		"bash":     "command,description,timeout_ms",
		"glob":     "path,pattern",
		"grep":     "-A,-B,-C,-i,-n,glob,head_limit,multiline,output_mode,path,pattern",
		"todo":     "todos",
		"webfetch": "url",
	}
	for _, tl := range Builtins() {
		if got := props(tl); got != want[tl.Spec().Name] {
			t.Errorf("%s properties %s, want %s", tl.Spec().Name, got, want[tl.Spec().Name])
		}
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestMalformedArguments(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "f.txt", "x\n")
	cases := []struct {
		tool Tool
		args string
		want string
	}{
		{Read{}, `{"file_path": `, "invalid JSON arguments for read"},
		{Read{}, `not json`, "invalid JSON arguments for read"},
		{Read{}, `[]`, "invalid JSON arguments for read"},
		{Read{}, `{}`, `missing required argument "file_path"`},
		{Read{}, `{"file_path": null}`, `missing required argument "file_path"`},
		{Read{}, `{"file_path": 7}`, `"file_path" must be a string`},
		{Read{}, `{"file_path": "f.txt", "limit": "many"}`, `"limit" must be an integer`},
		{Read{}, `{"file_path": "f.txt", "offset": 1.5}`, `"offset" must be an integer`},
		{Read{}, `{"file_path": ""}`, `must not be empty`},
		{Write{}, `{"file_path": "g.txt"}`, `missing required argument "content"`},
		{Write{}, `{"content": "x"}`, `missing required argument "file_path"`},
		{Edit{}, `{"file_path": "f.txt", "old_string": "x"}`, `missing required argument "new_string"`},
		{Edit{}, `{"file_path": "f.txt", "old_string": "x", "new_string": "y", "replace_all": "maybe"}`, `"replace_all" must be a boolean`},
		{Bash{}, `{"description": "x"}`, `missing required argument "command"`},
		{Glob{}, `{"path": "."}`, `missing required argument "pattern"`},
		{Grep{}, `{"pattern": "x", "-A": "two"}`, `"-A" must be an integer`},
		{Grep{}, `{"pattern": "x", "-i": "sure"}`, `"-i" must be a boolean`},
		{Todo{}, `{"todos": {"content": "x"}}`, `"todos" must be an array`},
	}
	for _, c := range cases {
		r := c.tool.Run(t.Context(), env, json.RawMessage(c.args))
		if !r.IsError || !r.Malformed || !strings.Contains(r.Output, c.want) {
			t.Errorf("%s %s: got %+v, want malformed mentioning %q", c.tool.Spec().Name, c.args, r, c.want)
		}
	}
	// Lenient forms are not malformed.
	for _, args := range []string{
		`{"file_path": "f.txt", "offset": "1", "limit": 10.0}`,
		`"{\"file_path\": \"f.txt\"}"`,
		`{"path": "f.txt"}`,
		`{"file_path": "f.txt", "unknown": true}`,
	} {
		mustOK(t, Read{}.Run(t.Context(), env, json.RawMessage(args)))
	}
}

func TestFileTrackerJSON(t *testing.T) {
	env := newTestEnv(t)
	p := writeFile(t, env.Root, "f.txt", "content\n")
	mustOK(t, call(t, Read{}, env, obj{"file_path": "f.txt"}))
	b, err := json.Marshal(env.Files)
	if err != nil {
		t.Fatal(err)
	}
	var snap FileTrackerSnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	if rec, ok := snap[p]; !ok || rec.Size != 8 || rec.Hash == "" {
		t.Fatalf("snapshot %s", b)
	}
	restored := NewFileTracker()
	if err := json.Unmarshal(b, restored); err != nil {
		t.Fatal(err)
	}
	if err := restored.Check(p); err != nil {
		t.Fatalf("restored tracker: %v", err)
	}
	if err := os.WriteFile(p, []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := restored.Check(p); err == nil {
		t.Fatal("change not detected")
	}
	if err := restored.Check(filepath.Join(env.Root, "other")); err != ErrNotRead {
		t.Fatalf("want ErrNotRead, got %v", err)
	}
}

func TestNewEnv(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(link, "")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if env.Root != real || env.Files == nil || env.Todos == nil {
		t.Fatalf("env %+v", env)
	}
	// Absolute paths through the symlinked spelling of the root work.
	writeFile(t, dir, "a.txt", "x\n")
	mustOK(t, call(t, Read{}, env, obj{"file_path": filepath.Join(link, "a.txt")}))
	if _, err := NewEnv(filepath.Join(dir, "a.txt"), ""); err == nil {
		t.Fatal("file accepted as root")
	}
}
