package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ultra-dev/ultra/internal/goal"
)

// defaultTimeout bounds a check without timeout_seconds.
const defaultTimeout = 60

// validate refuses a check that cannot be run or that asserts nothing: a
// check without an assertion could never honestly pass.
func validate(ch goal.Channel, c goal.Check) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("the %s check is not runnable: "+format, append([]any{ch}, a...)...)
	}
	patterns := map[string]string{
		"expect_stdout": c.ExpectStdout, "expect_stderr": c.ExpectStderr, "expect_body": c.ExpectBody,
		"expect_text": c.ExpectText,
	}
	for k, v := range c.ExpectJSON {
		patterns["expect_json "+k] = v
	}
	for i, st := range c.Steps {
		patterns[fmt.Sprintf("step %d expect", i+1)] = st.Expect
		patterns[fmt.Sprintf("step %d wait_text", i+1)] = st.WaitText
	}
	for name, p := range patterns {
		if _, err := regexp.Compile(p); err != nil {
			return bad("%s is not a valid regular expression (Go syntax): %v", name, err)
		}
	}
	if c.TimeoutSeconds < 0 {
		return bad("timeout_seconds is negative")
	}
	switch ch {
	case goal.ChannelCommand:
		if strings.TrimSpace(c.Run) == "" {
			return bad("run is empty")
		}
	case goal.ChannelHTTP:
		if strings.TrimSpace(c.Start) == "" {
			return bad("start is empty (the command that starts the server)")
		}
		if c.Port < 1 || c.Port > 65535 {
			return bad("port %d is not a TCP port", c.Port)
		}
		if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
			return bad("path %q does not start with /", c.Path)
		}
		if c.ExpectStatus == 0 && c.ExpectBody == "" && len(c.ExpectJSON) == 0 {
			return bad("it asserts nothing: give expect_status, expect_body or expect_json")
		}
	case goal.ChannelTmux:
		if strings.TrimSpace(c.Start) == "" {
			return bad("start is empty (the program to run in the pane)")
		}
		if c.Width < 0 || c.Height < 0 || c.Width > 1000 || c.Height > 1000 {
			return bad("the pane size %dx%d is out of range", c.Width, c.Height)
		}
		expects := 0
		for i, st := range c.Steps {
			if _, err := splitKeys(st.Keys); err != nil {
				return bad("step %d keys: %v", i+1, err)
			}
			if st.Keys == "" && st.Expect == "" {
				return bad("step %d has neither keys nor expect", i+1)
			}
			if st.Expect != "" {
				expects++
			}
		}
		if expects == 0 {
			return bad("it asserts nothing: give a step an expect")
		}
	case goal.ChannelDesktop:
		if ps := goal.DesktopProblems(c); len(ps) > 0 {
			return bad("%s", ps[0])
		}
	case goal.ChannelBrowser:
		if strings.TrimSpace(c.Start) == "" {
			return bad("start is empty (the command that starts the server)")
		}
		if _, _, err := loopbackURL(c.URL); err != nil {
			return bad("%v", err)
		}
		asserts := 0
		for i, st := range c.Steps {
			n := 0
			if st.Click != "" {
				n++
			}
			if st.Type != nil {
				n++
				if st.Type.Selector == "" {
					return bad("step %d type has no selector", i+1)
				}
			}
			if st.WaitText != "" {
				n++
				asserts++
			}
			if n != 1 {
				return bad("step %d must be exactly one of click, type, wait_text", i+1)
			}
		}
		if c.ExpectText != "" {
			asserts++
		}
		if c.ExpectSelector != "" {
			asserts++
		}
		if asserts == 0 {
			return bad("it asserts nothing: give expect_text, expect_selector or a wait_text step")
		}
	default:
		return fmt.Errorf("unknown channel %q (command, http, tmux or browser)", ch)
	}
	return nil
}

// loopbackURL checks that a browser check's url points at the program
// under test on this machine, and returns its port.
func loopbackURL(raw string) (*url.URL, int, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("url %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, 0, fmt.Errorf("url %q is not http(s)", raw)
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
	default:
		return nil, 0, fmt.Errorf("url %q must point at the program under test on localhost, 127.0.0.1 or [::1]", raw)
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, 0, fmt.Errorf("url %q has no valid port", raw)
		}
		port = n
	}
	return u, port, nil
}

// equal is an assertion that got is want.
func equal(name, want, got string) assertion {
	return assertion{Name: name, Want: want, Got: got, OK: want == got}
}

// matches is an assertion that the pattern finds a match in text; Got is
// the match, or an excerpt of text when there is none.
func matches(name, pattern, text string) assertion {
	a := assertion{Name: name, Want: strconv.Quote(pattern)}
	// Multi-line: ^ and $ match at the start and end of every line, so
	// "^ok$" matches a program that prints "ok\n".
	re, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		a.Got = "invalid pattern: " + err.Error()
		return a
	}
	if loc := re.FindStringIndex(text); loc != nil {
		a.OK = true
		a.Got = excerpt(text[loc[0]:loc[1]], 80)
		return a
	}
	switch a.Got = excerpt(text, 120); {
	case text == "":
		a.Got = "(empty)"
	case a.Got == "":
		a.Got = strconv.Quote(cut(text, 60)) // only white space
	}
	return a
}

// excerpt is s on one line, at most n bytes (its head and tail).
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	h := n * 2 / 3
	t := n - h - 1
	return validUTF8(s[:h]) + "…" + validUTF8(s[len(s)-t:])
}

// validUTF8 drops the partial runes a byte cut left at either end.
func validUTF8(s string) string {
	return strings.ToValidUTF8(s, "")
}

// jsonPath finds a dotted path (a.b.0.c) in a JSON document and returns
// the value as JSON text, strings unquoted.
func jsonPath(doc []byte, path string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("the body is not JSON: %v", err)
	}
	if path != "" && path != "." {
		for _, seg := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				next, ok := x[seg]
				if !ok {
					return "", fmt.Errorf("no key %q", seg)
				}
				v = next
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(x) {
					return "", fmt.Errorf("no index %q in an array of %d", seg, len(x))
				}
				v = x[i]
			default:
				return "", fmt.Errorf("%q is below a %s, not an object or array", seg, kind(v))
			}
		}
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// splitKeys splits a tmux step's keys into the arguments of tmux
// send-keys. The rule:
//
//   - words are separated by spaces or tabs;
//   - '…' and "…" keep spaces inside a word (the quotes are removed; in
//     "…" a backslash escapes " and \), and a backslash outside quotes
//     makes the next character literal;
//   - a word that is a tmux key name (Enter, Escape, Tab, Space, BSpace,
//     Up, C-c, M-x, F1, …) sends that key; the words between key names
//     are typed as text with one space between them (typeWords): "set
//     color blue Enter" types "set color blue" and presses Enter.
func splitKeys(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("a backslash at the end")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("an unterminated ' quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`an unterminated " quote`)
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
