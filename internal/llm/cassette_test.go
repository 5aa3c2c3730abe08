package llm

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// interaction is the part of one recorded go-vcr v2 exchange the fixture
// tests replay.
type interaction struct {
	Status      int
	ContentType string
	Body        string
}

// readCassette reads the interactions of a go-vcr v2 cassette. It is not a
// YAML parser: it understands the fixed layout go-vcr writes (two-space
// indentation, "- id:" items, request and response maps) and the scalar
// styles it uses for bodies (plain, single- or double-quoted, and literal
// blocks with any chomping indicator).
func readCassette(path string) ([]interaction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []interaction
	section := ""
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		switch {
		case strings.HasPrefix(line, "- id:"):
			out = append(out, interaction{})
			section = ""
			continue
		case line == "  request:" || line == "  response:":
			section = strings.TrimSuffix(strings.TrimSpace(line), ":")
			continue
		}
		if len(out) == 0 || section != "response" || indent(line) != 4 {
			continue
		}
		key, value, _ := strings.Cut(strings.TrimSpace(line), ":")
		value = strings.TrimSpace(value)
		cur := &out[len(out)-1]
		switch key {
		case "body":
			body, next, err := scalar(lines, i, value, 4)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
			}
			cur.Body, i = body, next
		case "code":
			if cur.Status, err = strconv.Atoi(value); err != nil {
				return nil, fmt.Errorf("%s:%d: code %q", path, i+1, value)
			}
		case "headers":
			for i+1 < len(lines) && indent(lines[i+1]) > 4 {
				i++
				name := strings.TrimSuffix(strings.TrimSpace(lines[i]), ":")
				if strings.EqualFold(name, "Content-Type") && i+1 < len(lines) {
					cur.ContentType = strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "- ")
				}
			}
		}
	}
	return out, nil
}

// indent counts the leading spaces of a line; a blank line has none.
func indent(line string) int {
	if strings.TrimSpace(line) == "" {
		return -1
	}
	return len(line) - len(strings.TrimLeft(line, " "))
}

// scalar decodes the value of the key on lines[at], whose text after the
// colon is value and whose indentation is parent. It returns the string
// and the index of the last line it used.
func scalar(lines []string, at int, value string, parent int) (string, int, error) {
	switch {
	case strings.HasPrefix(value, "|"):
		return literal(lines, at, value, parent)
	case strings.HasPrefix(value, "'"):
		if len(value) < 2 || !strings.HasSuffix(value, "'") {
			return "", at, fmt.Errorf("multi-line single-quoted scalars are not supported")
		}
		return strings.ReplaceAll(value[1:len(value)-1], "''", "'"), at, nil
	case strings.HasPrefix(value, `"`):
		var s string
		if err := json.Unmarshal([]byte(value), &s); err != nil {
			return "", at, fmt.Errorf("double-quoted scalar: %v", err)
		}
		return s, at, nil
	default:
		return value, at, nil
	}
}

// literal decodes a literal block scalar ("|", "|+", "|-", optionally with
// an indentation digit).
func literal(lines []string, at int, header string, parent int) (string, int, error) {
	chomp, width := byte(0), 0
	for _, c := range []byte(header[1:]) {
		switch {
		case c == '+' || c == '-':
			chomp = c
		case c >= '1' && c <= '9':
			width = parent + int(c-'0')
		default:
			return "", at, fmt.Errorf("block header %q", header)
		}
	}
	end := at
	for end+1 < len(lines) {
		n := indent(lines[end+1])
		if n >= 0 && n <= parent {
			break
		}
		if width == 0 && n > 0 {
			width = n
		}
		end++
	}
	var body []string
	for _, l := range lines[at+1 : end+1] {
		if len(l) >= width {
			body = append(body, l[width:])
		} else {
			body = append(body, "")
		}
	}
	trailing := 0
	for len(body) > 0 && body[len(body)-1] == "" {
		body = body[:len(body)-1]
		trailing++
	}
	if len(body) == 0 {
		return "", end, nil
	}
	s := strings.Join(body, "\n")
	switch chomp {
	case '-':
	case '+':
		s += strings.Repeat("\n", trailing+1)
	default:
		s += "\n"
	}
	return s, end, nil
}
