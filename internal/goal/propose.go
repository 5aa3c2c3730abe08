package goal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Limits a proposal must keep.
const (
	// MaxGoals is how many goals one proposal may hold.
	MaxGoals = 20
	// MinCriteria is how many criteria each goal needs at least: the
	// happy path, an edge case, and a regression or adversarial case.
	MinCriteria = 3
	// MaxTimeoutSeconds bounds a check's timeout_seconds.
	MaxTimeoutSeconds = 600
	// maxSlug is the longest slug a goal id takes from its title.
	maxSlug = 32
	// MaxCriteria is how many criteria one goal may hold.
	MaxCriteria = 20
)

// Size limits of a proposal's texts, in bytes: goals.json and the ledger
// are committed, a goal's title and objective go into its commit message,
// and a person reads all of it when accepting the plan.
const (
	MaxTitle     = 200
	MaxObjective = 4 << 10
	MaxText      = 2 << 10 // a scenario, expected evidence, a stop condition
	MaxScript    = 8 << 10 // run, start
	MaxPattern   = 2 << 10 // every expect_* and wait_text, a step's keys, a header, a selector
	MaxBody      = 16 << 10
	MaxSteps     = 50
	MaxHeaders   = 20
)

// HTTPMethods lists the methods an http check may use; an empty method
// means GET.
var HTTPMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Problem is one thing wrong with a proposal (or a steering change): where
// it is, as a path into the JSON the planner sent, and what is wrong.
type Problem struct {
	Where string // goals[0].criteria[2].check.run; empty for the whole
	What  string
}

// String is "where: what", or just what when there is no place.
func (p Problem) String() string {
	if p.Where == "" {
		return p.What
	}
	return p.Where + ": " + p.What
}

// Error makes a Problem usable as an error; it is String.
func (p Problem) Error() string { return p.String() }

// Problems joins problems into one error (nil when there are none).
func Problems(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return errors.New(strings.Join(s, "; "))
}

// DecodeProposal reads the planner's goals{...} arguments strictly: an
// unknown field, a value of the wrong type or trailing text is an error
// that names its place (goals[1].criteria[0].check: unknown field
// "expect_code"). Arguments encoded twice (a JSON string holding the
// object) are accepted. A null value counts as an absent field. The
// result still needs Validate.
func DecodeProposal(raw []byte) (Proposal, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return Proposal{}, jsonProblem(raw, "the arguments are a JSON string that cannot be read", err)
		}
		raw = bytes.TrimSpace([]byte(inner))
		if len(raw) > 0 && raw[0] == '"' {
			return Proposal{}, Problem{What: "the arguments are encoded more than twice: send the JSON object {\"goals\": [...]}"}
		}
	}
	if len(raw) == 0 {
		return Proposal{}, Problem{What: "the arguments are empty: send the JSON object {\"goals\": [...]}"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Proposal{}, jsonProblem(raw, "the arguments are not valid JSON", err)
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		return Proposal{}, Problem{What: fmt.Sprintf("unexpected text after the proposal object at byte %d: send one JSON object", dec.InputOffset())}
	}
	if v == nil {
		return Proposal{}, Problem{What: "the arguments are null: send the JSON object {\"goals\": [...]}"}
	}
	if p := checkShape("", v, reflect.TypeFor[Proposal]()); p != nil {
		return Proposal{}, *p
	}
	var p Proposal
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&p); err != nil {
		return Proposal{}, Problem{What: "cannot decode the proposal: " + err.Error()}
	}
	return p, nil
}

// jsonProblem describes a JSON decoding error with its line and column.
func jsonProblem(raw []byte, what string, err error) Problem {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included
		line, col := lineCol(raw, int(se.Offset)-1)
		return Problem{Where: fmt.Sprintf("line %d, column %d", line, col), What: what + ": " + se.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return Problem{What: what + ": the text ends before the JSON value does"}
	}
	return Problem{What: what + ": " + err.Error()}
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(raw []byte, off int) (line, col int) {
	off = min(max(off, 0), len(raw))
	before := raw[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// checkShape checks a generically decoded JSON value against Go type t,
// field by field, so that the first mismatch can be named by its path.
func checkShape(where string, v any, t reflect.Type) *Problem {
	if v == nil {
		return nil // null: the field stays absent
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(where, v, t.Elem())
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch(where, "an object", v)
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			f, ok := fields[k]
			if !ok {
				return &Problem{Where: orWhole(where), What: fmt.Sprintf("unknown field %q (the fields here are: %s)", k, strings.Join(fieldNames(t), ", "))}
			}
			if p := checkShape(join(where, k), m[k], f.Type); p != nil {
				return p
			}
		}
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			return mismatch(where, "an array", v)
		}
		for i, e := range a {
			if p := checkShape(fmt.Sprintf("%s[%d]", where, i), e, t.Elem()); p != nil {
				return p
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch(where, "an object", v)
		}
		for _, k := range sortedKeys(m) {
			if p := checkShape(where+"["+strconv.Quote(k)+"]", m[k], t.Elem()); p != nil {
				return p
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return mismatch(where, "a string", v)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(where, "a whole number", v)
		}
		if _, err := strconv.ParseInt(n.String(), 10, 32); err != nil {
			return &Problem{Where: where, What: fmt.Sprintf("expected a whole number, got %s", n)}
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return mismatch(where, "true or false", v)
		}
	default:
		return &Problem{Where: where, What: "unsupported field type " + t.String()}
	}
	return nil
}

// mismatch says that the value at where is not of the kind wanted.
func mismatch(where, want string, v any) *Problem {
	var got string
	switch x := v.(type) {
	case string:
		got = "the string " + strconv.Quote(clip(x, 40))
	case json.Number:
		got = "the number " + x.String()
	case bool:
		got = strconv.FormatBool(x)
	case []any:
		got = "an array"
	case map[string]any:
		got = "an object"
	default:
		got = fmt.Sprintf("%T", v)
	}
	return &Problem{Where: orWhole(where), What: fmt.Sprintf("expected %s, got %s", want, got)}
}

func orWhole(where string) string {
	if where == "" {
		return "(the arguments)"
	}
	return where
}

func join(where, field string) string {
	if where == "" {
		return field
	}
	return where + "." + field
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// jsonField is one JSON-visible field of a struct.
type jsonField struct {
	Name      string
	Index     int
	Type      reflect.Type
	OmitEmpty bool
}

// jsonFieldList lists the JSON fields of struct type t in order, as
// encoding/json names them (exported fields, tag names, "-" skipped).
func jsonFieldList(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{Name: name, Index: i, Type: f.Type, OmitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

func jsonFields(t reflect.Type) map[string]jsonField {
	m := map[string]jsonField{}
	for _, f := range jsonFieldList(t) {
		m[f.Name] = f
	}
	return m
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range jsonFieldList(t) {
		names = append(names, f.Name)
	}
	return names
}

// setFields lists the JSON names of the fields of struct value v that are
// not zero, in declaration order.
func setFields(v any) []string {
	rv := reflect.ValueOf(v)
	var out []string
	for _, f := range jsonFieldList(rv.Type()) {
		if !rv.Field(f.Index).IsZero() {
			out = append(out, f.Name)
		}
	}
	return out
}

// Validate lists everything wrong with the proposal, each with its place;
// nil means it may be shown for acceptance. Besides the shape of each
// check it refuses checks that cannot fail (see Trivial).
func (p Proposal) Validate() []Problem {
	var ps []Problem
	switch n := len(p.Goals); {
	case n == 0:
		ps = append(ps, Problem{"goals", "at least one goal is required"})
	case n > MaxGoals:
		ps = append(ps, Problem{"goals", fmt.Sprintf("at most %d goals are allowed, got %d: merge related goals", MaxGoals, n)})
	}
	for i, g := range p.Goals {
		ps = append(ps, validateGoal(fmt.Sprintf("goals[%d]", i), g)...)
	}
	ps = append(ps, dependencyProblems(p.Goals, func(i int) string { return fmt.Sprintf("goals[%d]", i) })...)
	return ps
}

// validateGoal checks one proposed goal; where is its path.
func validateGoal(where string, g ProposedGoal) []Problem {
	ps := nonEmpty(nil, where+".title", g.Title, "")
	ps = nonEmpty(ps, where+".objective", g.Objective, "")
	ps = bounded(ps, where+".title", g.Title, MaxTitle)
	if strings.ContainsAny(g.Title, "\r\n") {
		ps = append(ps, Problem{where + ".title", "a title is one line: put the rest in the objective"})
	}
	ps = bounded(ps, where+".objective", g.Objective, MaxObjective)
	if n := len(g.Criteria); n < MinCriteria {
		ps = append(ps, Problem{where + ".criteria", fmt.Sprintf("at least %d criteria are required (the happy path, an edge case, and a regression or adversarial case), got %d", MinCriteria, n)})
	} else if n > MaxCriteria {
		ps = append(ps, Problem{where + ".criteria", fmt.Sprintf("at most %d criteria are allowed, got %d: keep the ones that show the goal", MaxCriteria, n)})
	}
	var happy, edge, guard bool
	for _, c := range g.Criteria {
		switch c.UserModel {
		case Happy:
			happy = true
		case Edge:
			edge = true
		case Regression, Adversarial:
			guard = true
		}
	}
	if !happy {
		ps = append(ps, Problem{where + ".criteria", `no criterion covers the happy path (user_model "happy")`})
	}
	if !edge {
		ps = append(ps, Problem{where + ".criteria", `no criterion covers an edge case (user_model "edge")`})
	}
	if !guard {
		ps = append(ps, Problem{where + ".criteria", `no criterion covers a regression or adversarial case (user_model "regression" or "adversarial")`})
	}
	for i, c := range g.Criteria {
		ps = append(ps, validateCriterion(fmt.Sprintf("%s.criteria[%d]", where, i), c)...)
	}
	return append(ps, goalSurfaceProblems(where, g)...)
}

// validateCriterion checks one proposed criterion; where is its path.
func validateCriterion(where string, c ProposedCriterion) []Problem {
	ps := nonEmpty(nil, where+".scenario", c.Scenario, "say what a user does and sees")
	ps = nonEmpty(ps, where+".expected_evidence", c.ExpectedEvidence, "say what the captured evidence will show")
	ps = bounded(ps, where+".scenario", c.Scenario, MaxText)
	ps = bounded(ps, where+".expected_evidence", c.ExpectedEvidence, MaxText)
	ps = bounded(ps, where+".stop_condition", c.StopCondition, MaxText)
	if !slices.Contains(UserModels, c.UserModel) {
		ps = append(ps, Problem{where + ".user_model", unknownValue(string(c.UserModel), UserModels)})
	}
	if !slices.Contains(Channels, c.Channel) {
		return append(ps, Problem{where + ".channel", unknownValue(string(c.Channel), Channels)})
	}
	// No surface: the channel's (DefaultSurface).
	if c.Surface != "" && !slices.Contains(Surfaces, c.Surface) {
		ps = append(ps, Problem{where + ".surface", fmt.Sprintf("unknown value %q: use one of %s (what the scenario exercises: a command's output, data, an endpoint, a terminal screen, a web page, a window)", c.Surface, quotedSurfaces())})
	} else if why := surfaceMismatch(c.surface(), c.Channel); why != "" {
		ps = append(ps, Problem{where + ".surface", why})
	} else if why := standIn(c.surface(), c.Check); why != "" {
		ps = append(ps, Problem{where + ".check.start", why})
	}
	if sizes := checkSizes(where+".check", c.Check); len(sizes) > 0 {
		return append(ps, sizes...)
	}
	checkPs := validateCheck(where+".check", c.Channel, c.Check)
	if len(checkPs) == 0 {
		if why := Trivial(c.Channel, c.Check); why != "" {
			checkPs = append(checkPs, Problem{where + ".check", "cannot fail: " + why})
		}
	}
	return append(ps, checkPs...)
}

// bounded adds a problem at where when text is longer than max bytes.
func bounded(ps []Problem, where, text string, max int) []Problem {
	if len(text) > max {
		return append(ps, Problem{where, fmt.Sprintf("is %d bytes, at most %d are allowed: say it shorter", len(text), max)})
	}
	return ps
}

// checkSizes lists the fields of check c that are too long or too many.
func checkSizes(where string, c Check) []Problem {
	var ps []Problem
	for _, f := range []struct {
		name, text string
		max        int
	}{{"run", c.Run, MaxScript}, {"start", c.Start, MaxScript}, {"expect_stdout", c.ExpectStdout, MaxPattern},
		{"expect_stderr", c.ExpectStderr, MaxPattern}, {"path", c.Path, MaxPattern}, {"body", c.Body, MaxBody},
		{"expect_body", c.ExpectBody, MaxPattern}, {"url", c.URL, MaxPattern}, {"expect_text", c.ExpectText, MaxPattern},
		{"expect_selector", c.ExpectSelector, MaxPattern}} {
		ps = bounded(ps, join(where, f.name), f.text, f.max)
	}
	if len(c.Headers) > MaxHeaders {
		ps = append(ps, Problem{join(where, "headers"), fmt.Sprintf("at most %d headers are allowed, got %d", MaxHeaders, len(c.Headers))})
	}
	for _, k := range sortedKeys(c.Headers) {
		ps = bounded(ps, join(where, "headers["+strconv.Quote(clip(k, 40))+"]"), k+c.Headers[k], MaxPattern)
	}
	if len(c.ExpectJSON) > MaxHeaders {
		ps = append(ps, Problem{join(where, "expect_json"), fmt.Sprintf("at most %d paths are allowed, got %d", MaxHeaders, len(c.ExpectJSON))})
	}
	for _, k := range sortedKeys(c.ExpectJSON) {
		ps = bounded(ps, join(where, "expect_json["+strconv.Quote(clip(k, 40))+"]"), k+c.ExpectJSON[k], MaxPattern)
	}
	if len(c.Steps) > MaxSteps {
		ps = append(ps, Problem{join(where, "steps"), fmt.Sprintf("at most %d steps are allowed, got %d", MaxSteps, len(c.Steps))})
	}
	for i, st := range c.Steps {
		sw := join(where, fmt.Sprintf("steps[%d]", i))
		ps = bounded(ps, sw+".keys", st.Keys, MaxPattern)
		ps = bounded(ps, sw+".expect", st.Expect, MaxPattern)
		ps = bounded(ps, sw+".click", st.Click, MaxPattern)
		ps = bounded(ps, sw+".wait_text", st.WaitText, MaxPattern)
		ps = bounded(ps, sw+".key", st.Key, MaxPattern)
		if st.Type != nil {
			ps = bounded(ps, sw+".type", st.Type.Selector+st.Type.Text, MaxPattern)
		}
	}
	return ps
}

// nonEmpty adds a problem at where when text is blank; hint says what
// belongs there.
func nonEmpty(ps []Problem, where, text, hint string) []Problem {
	if strings.TrimSpace(text) != "" {
		return ps
	}
	what := "must not be empty"
	if hint != "" {
		what += ": " + hint
	}
	return append(ps, Problem{where, what})
}

// unknownValue says that v is not one of the known values.
func unknownValue[T ~string](v string, known []T) string {
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = strconv.Quote(string(k))
	}
	if v == "" {
		return "is required: use one of " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("unknown value %q: use one of %s", v, strings.Join(names, ", "))
}

// channelFields lists the check fields each channel uses
// (timeout_seconds applies to all).
var channelFields = map[Channel][]string{
	ChannelCommand: {"run", "expect_exit", "expect_stdout", "expect_stderr"},
	ChannelHTTP:    {"start", "port", "method", "path", "headers", "body", "expect_status", "expect_body", "expect_json"},
	ChannelTmux:    {"start", "steps", "width", "height"},
	ChannelBrowser: {"start", "url", "steps", "expect_text", "expect_selector"},
	ChannelDesktop: {"start", "steps", "expect_text", "width", "height"},
}

// stepFields lists the step fields each channel with steps uses.
var stepFields = map[Channel][]string{
	ChannelTmux:    {"keys", "expect"},
	ChannelBrowser: {"click", "type", "wait_text"},
	ChannelDesktop: {"click", "click_at", "type", "key", "wait_text", "screenshot"},
}

// validateCheck checks that c has exactly the fields channel ch uses and
// that each is well formed.
func validateCheck(where string, ch Channel, c Check) []Problem {
	var ps []Problem
	add := func(field, what string) { ps = append(ps, Problem{join(where, field), what}) }
	for _, name := range setFields(c) {
		if name == "timeout_seconds" || slices.Contains(channelFields[ch], name) {
			continue
		}
		add(name, fmt.Sprintf("not used by the %s channel (%s checks use: %s)", ch, ch, strings.Join(channelFields[ch], ", ")))
	}
	if c.TimeoutSeconds < 0 || c.TimeoutSeconds > MaxTimeoutSeconds {
		add("timeout_seconds", fmt.Sprintf("must be between 0 (the default, 60) and %d, got %d", MaxTimeoutSeconds, c.TimeoutSeconds))
	}
	pattern := func(field, re string) {
		if re == "" {
			return
		}
		if _, err := regexp.Compile(re); err != nil {
			add(field, "not a valid Go regular expression: "+err.Error())
		}
	}
	shell := func(field, src, what string) {
		if strings.TrimSpace(src) == "" {
			add(field, "is required: "+what)
			return
		}
		if _, err := parseShell(src); err != nil {
			add(field, "not valid shell: "+err.Error())
		}
	}
	switch ch {
	case ChannelCommand:
		shell("run", c.Run, "the shell command to run")
		if c.ExpectExit == nil && c.ExpectStdout == "" && c.ExpectStderr == "" {
			ps = append(ps, Problem{where, "needs at least one assertion: expect_exit, expect_stdout or expect_stderr"})
		}
		if c.ExpectExit != nil && (*c.ExpectExit < 0 || *c.ExpectExit > 255) {
			add("expect_exit", fmt.Sprintf("an exit status is between 0 and 255, got %d", *c.ExpectExit))
		}
		pattern("expect_stdout", c.ExpectStdout)
		pattern("expect_stderr", c.ExpectStderr)
	case ChannelHTTP:
		shell("start", c.Start, "the command that starts the server")
		if c.Port < 1 || c.Port > 65535 {
			add("port", fmt.Sprintf("must be the port the server listens on, 1 to 65535, got %d", c.Port))
		}
		if !strings.HasPrefix(c.Path, "/") {
			add("path", fmt.Sprintf("must start with \"/\", got %q", c.Path))
		}
		if c.Method != "" && !slices.Contains(HTTPMethods, c.Method) {
			add("method", fmt.Sprintf("unknown method %q: use one of %s (empty means GET)", c.Method, strings.Join(HTTPMethods, ", ")))
		}
		for _, name := range sortedKeys(c.Headers) {
			if name == "" || strings.ContainsAny(name, " \t\r\n:") {
				add("headers", fmt.Sprintf("invalid header name %q", name))
			}
			if strings.ContainsAny(c.Headers[name], "\r\n") {
				add("headers["+strconv.Quote(name)+"]", "a header value cannot hold a line break")
			}
		}
		if c.ExpectStatus == 0 && c.ExpectBody == "" && len(c.ExpectJSON) == 0 {
			ps = append(ps, Problem{where, "needs at least one assertion: expect_status, expect_body or expect_json"})
		}
		if c.ExpectStatus != 0 && (c.ExpectStatus < 100 || c.ExpectStatus > 599) {
			add("expect_status", fmt.Sprintf("an HTTP status is between 100 and 599, got %d", c.ExpectStatus))
		}
		pattern("expect_body", c.ExpectBody)
		for _, key := range sortedKeys(c.ExpectJSON) {
			field := "expect_json[" + strconv.Quote(key) + "]"
			if key == "" || slices.Contains(strings.Split(key, "."), "") {
				add(field, "a path is dotted names or indexes (a.b.0.c) with no empty part")
			}
			pattern(field, c.ExpectJSON[key])
		}
	case ChannelTmux:
		shell("start", c.Start, "the command that runs the program in the pane")
		if len(c.Steps) == 0 {
			add("steps", "at least one step is required: {keys} to type and/or {expect} to wait for")
		}
		expects := 0
		for i, s := range c.Steps {
			sw := fmt.Sprintf("steps[%d]", i)
			ps = append(ps, foreignStepFields(join(where, sw), ch, s)...)
			if s.Keys == "" && s.Expect == "" {
				add(sw, "needs keys, expect or both")
			}
			if s.Expect != "" {
				expects++
			}
			pattern(sw+".expect", s.Expect)
		}
		if len(c.Steps) > 0 && expects == 0 {
			add("steps", "no step has an expect: at least one step must say what the pane must show")
		}
		if c.Width < 0 || c.Width > 1000 {
			add("width", fmt.Sprintf("must be 0 (the default, 120) or up to 1000 columns, got %d", c.Width))
		}
		if c.Height < 0 || c.Height > 1000 {
			add("height", fmt.Sprintf("must be 0 (the default, 40) or up to 1000 rows, got %d", c.Height))
		}
	case ChannelBrowser:
		shell("start", c.Start, "the command that starts the server")
		if why := localURL(c.URL); why != "" {
			add("url", why)
		}
		waits := 0
		for i, s := range c.Steps {
			sw := fmt.Sprintf("steps[%d]", i)
			ps = append(ps, foreignStepFields(join(where, sw), ch, s)...)
			actions := 0
			if s.Click != "" {
				actions++
			}
			if s.Type != nil {
				actions++
				if strings.TrimSpace(s.Type.Selector) == "" {
					add(sw+".type.selector", "is required: the CSS selector of the element to type into")
				}
			}
			if s.WaitText != "" {
				actions++
				waits++
			}
			if actions != 1 {
				add(sw, fmt.Sprintf("must have exactly one action (click, type or wait_text), got %d", actions))
			}
			pattern(sw+".wait_text", s.WaitText)
		}
		if c.ExpectText == "" && c.ExpectSelector == "" && waits == 0 {
			ps = append(ps, Problem{where, "needs at least one assertion: expect_text, expect_selector or a wait_text step"})
		}
		pattern("expect_text", c.ExpectText)
	case ChannelDesktop:
		ps = append(ps, validateDesktop(where, c)...)
	}
	return ps
}

// foreignStepFields lists the step fields that channel ch does not use.
func foreignStepFields(where string, ch Channel, s Step) []Problem {
	var ps []Problem
	for _, name := range setFields(s) {
		if !slices.Contains(stepFields[ch], name) {
			ps = append(ps, Problem{where + "." + name, fmt.Sprintf("not used by %s steps (they use: %s)", ch, strings.Join(stepFields[ch], ", "))})
		}
	}
	return ps
}

// localURL explains why u is not an http URL on this machine with a port,
// or returns "".
func localURL(u string) string {
	const want = "must be http://localhost:PORT/... or http://127.0.0.1:PORT/..."
	if u == "" {
		return "is required: " + want
	}
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Sprintf("%s: %v", want, err)
	}
	if p.Scheme != "http" || p.User != nil || p.Opaque != "" || (p.Hostname() != "localhost" && p.Hostname() != "127.0.0.1") {
		return fmt.Sprintf("%s, got %q", want, u)
	}
	port, err := strconv.Atoi(p.Port())
	if err != nil || port < 1 || port > 65535 {
		return fmt.Sprintf("%s with a port from 1 to 65535, got %q", want, u)
	}
	return ""
}

// ToGoals turns a valid proposal into goals (call Validate first): ids
// G001-slug from the titles, criteria ids G001-C1…, everything pending,
// Essential true unless the proposal says false, an empty HTTP method
// made GET, and every time set to now.
func (p Proposal) ToGoals(now time.Time) []Goal {
	goals := make([]Goal, 0, len(p.Goals))
	for i, pg := range p.Goals {
		goals = append(goals, newGoal(i+1, pg, now))
	}
	resolveDependencies(goals, p.Goals)
	return goals
}

// newGoal makes goal number n (G00n-slug) from a proposed goal.
func newGoal(n int, pg ProposedGoal, now time.Time) Goal {
	id := fmt.Sprintf("G%03d-%s", n, Slug(pg.Title))
	g := Goal{
		ID:              id,
		Title:           strings.TrimSpace(pg.Title),
		Objective:       strings.TrimSpace(pg.Objective),
		Status:          Pending,
		CreatedAt:       now,
		UpdatedAt:       now,
		Refactor:        pg.Refactor,
		SuccessCriteria: make([]Criterion, 0, len(pg.Criteria)),
	}
	for j, pc := range pg.Criteria {
		g.SuccessCriteria = append(g.SuccessCriteria, newCriterion(fmt.Sprintf("G%03d-C%d", n, j+1), pc, pg.Refactor))
	}
	return g
}

// defaultStopCondition is the stop condition of a criterion that states none.
var defaultStopCondition = fmt.Sprintf("%d identical failures in a row fail the goal with a diagnosis", MaxSameFailures)

// newCriterion makes a pending criterion with id from a proposed one, of
// a goal that is (or is not) a refactor.
func newCriterion(id string, pc ProposedCriterion, refactor bool) Criterion {
	c := Criterion{
		ID:               id,
		Scenario:         strings.TrimSpace(pc.Scenario),
		UserModel:        pc.UserModel,
		Surface:          pc.surface(),
		Channel:          pc.Channel,
		Check:            cloneCheck(pc.Check),
		ExpectedEvidence: strings.TrimSpace(pc.ExpectedEvidence),
		Essential:        pc.Essential == nil || *pc.Essential,
		StopCondition:    strings.TrimSpace(pc.StopCondition),
		Status:           CriterionPending,
		Expect:           ExpectFor(pc.UserModel, ReadsOnly(pc.Channel, pc.Check), refactor),
	}
	if c.Channel == ChannelHTTP && c.Check.Method == "" {
		c.Check.Method = "GET"
	}
	if c.StopCondition == "" {
		c.StopCondition = defaultStopCondition
	}
	return c
}

// Slug is the id part taken from a title: lowercase ASCII letters and
// digits, other runs of characters joined as one '-', at most 32
// characters, "goal" when nothing is left.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "-")
	}
	if s == "" {
		return "goal"
	}
	return s
}
