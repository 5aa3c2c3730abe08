package jsonpos

import (
	"encoding/json"
	"testing"
)

func TestError(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"{\n  \"a\": 1,\n  \"b\": [1,,2]\n}", "s.json:3:11: invalid character ',' looking for beginning of value"},
		{"{\"permissions\": {\"allow\": \"Bash\"}}", `s.json:1:32: field "permissions.allow" is a JSON string where a list is wanted`},
		{"{\"a\": 1", "s.json:1:7: unexpected end of JSON input"},
	} {
		var v struct {
			Permissions struct {
				Allow []string `json:"allow"`
			} `json:"permissions"`
			A int   `json:"a"`
			B []int `json:"b"`
		}
		err := json.Unmarshal([]byte(c.text), &v)
		if err == nil {
			t.Fatalf("%q decoded", c.text)
		}
		if got := Error("s.json", []byte(c.text), err).Error(); got != c.want {
			t.Errorf("Error(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestPosition(t *testing.T) {
	for _, c := range []struct {
		off       int64
		line, col int
	}{{0, 1, 1}, {3, 1, 3}, {4, 2, 1}, {6, 2, 2}, {99, 2, 2}} {
		if l, col := Position([]byte("abc\nde"), c.off); l != c.line || col != c.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
}
