package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/event"
)

// kindOf is the ACP kind of one of ultra's tools: what an editor shows
// beside the call.
func kindOf(tool string) sdk.ToolKind {
	switch {
	case tool == "read":
		return sdk.ToolKindRead
	case tool == "write" || tool == "edit":
		return sdk.ToolKindEdit
	case tool == "bash" || tool == "verify":
		return sdk.ToolKindExecute
	case tool == "glob" || tool == "grep" || tool == "mcp_search":
		return sdk.ToolKindSearch
	case tool == "todo" || tool == "goals" || tool == "review":
		return sdk.ToolKindThink
	case tool == "webfetch" || tool == "websearch":
		return sdk.ToolKindFetch
	case tool == "phase":
		return sdk.ToolKindSwitchMode
	}
	return sdk.ToolKindOther
}

// callArgs are the arguments of ultra's tools an editor shows.
type callArgs struct {
	FilePath  string `json:"file_path"`
	Path      string `json:"path"`
	Offset    int    `json:"offset"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
	Content   string `json:"content"`
	Command   string `json:"command"`
	Pattern   string `json:"pattern"`
	URL       string `json:"url"`
	To        string `json:"to"`
}

func parseArgs(raw json.RawMessage) (callArgs, map[string]any) {
	var a callArgs
	var m map[string]any
	_ = json.Unmarshal(raw, &a)
	if json.Unmarshal(raw, &m) != nil {
		m = nil
	}
	return a, m
}

// callTitle is one line naming the call: the tool and what it acts on.
func callTitle(tool string, raw json.RawMessage) string {
	a, m := parseArgs(raw)
	if g, ok := m["goals"].([]any); ok {
		return fmt.Sprintf("%s: %d proposed", tool, len(g))
	}
	for _, v := range []string{a.Command, a.FilePath, a.Path, a.Pattern, a.URL, a.To} {
		if v != "" {
			return event.Printable(tool + " " + event.OneLine(v, 200))
		}
	}
	if len(m) == 0 {
		return tool
	}
	b, _ := json.Marshal(m)
	return event.Printable(tool + " " + event.OneLine(string(b), 200))
}

// inside is path made absolute against workdir when it stays inside it
// ("" otherwise): an editor opens the locations it is given, and a path
// the model wrote must not send it outside the run's tree.
func inside(workdir, path string) string {
	if workdir == "" || path == "" || !filepath.IsAbs(workdir) {
		return ""
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(workdir, p)
	}
	p = filepath.Clean(p)
	if strings.ContainsFunc(p, unicode.IsControl) || !within(workdir, p) {
		return ""
	}
	// A link in the tree (the repository's, or one the model made) can
	// lead out of it: the editor would open what it points at. Only a path
	// that stays inside once its links are followed is sent.
	if real, err := realPrefix(p); err != nil || !within(workdir, real) {
		if rw, err := filepath.EvalSymlinks(workdir); err != nil || real == "" || !within(rw, real) {
			return ""
		}
	}
	return p
}

// within says p is dir or lies under it (lexically).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPrefix is p with the links of its longest existing prefix followed
// (a file not written yet keeps its own name under its real folder).
func realPrefix(p string) (string, error) {
	rest := ""
	for at := p; ; at = filepath.Dir(at) {
		if r, err := filepath.EvalSymlinks(at); err == nil {
			return filepath.Join(r, rest), nil
		}
		if filepath.Dir(at) == at {
			return "", os.ErrNotExist
		}
		rest = filepath.Join(filepath.Base(at), rest)
	}
}

// locations are the files a call acts on, with a line where the call
// gives one (a read's offset).
func locations(workdir, tool string, raw json.RawMessage) []sdk.ToolCallLocation {
	a, _ := parseArgs(raw)
	path := a.FilePath
	if path == "" && (tool == "grep" || tool == "glob") {
		path = a.Path
	}
	abs := inside(workdir, path)
	if abs == "" {
		return nil
	}
	loc := sdk.ToolCallLocation{Path: abs}
	if tool == "read" && a.Offset > 0 {
		loc.Line = sdk.Ptr(a.Offset)
	}
	return []sdk.ToolCallLocation{loc}
}

// diffOf is an edit or write call's change as ACP diff content (nil for
// other tools, or a file outside the run's tree).
func diffOf(workdir, tool string, raw json.RawMessage) []sdk.ToolCallContent {
	a, _ := parseArgs(raw)
	abs := inside(workdir, a.FilePath)
	if abs == "" {
		return nil
	}
	switch tool {
	case "edit":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(abs, a.NewString, a.OldString)}
	case "write":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(abs, a.Content)}
	}
	return nil
}

// rawInput is the call's arguments as JSON values, for the editor to
// show whole (nil when they are not JSON).
func rawInput(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return printableValue(v)
}

// printableValue is v with every string in it made printable: no escape
// sequence of the model's reaches the editor's terminal or clipboard.
func printableValue(v any) any {
	switch x := v.(type) {
	case string:
		return event.Printable(x)
	case []any:
		for i := range x {
			x[i] = printableValue(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = printableValue(e)
		}
	}
	return v
}

// textContent is text as the content of a tool call.
func textContent(s string) []sdk.ToolCallContent {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(s))}
}
