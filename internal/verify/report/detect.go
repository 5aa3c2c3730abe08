package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Format names, as Detect returns them and Report.Format holds them.
const (
	FormatGoJSON = "go-json"
	FormatJUnit  = "junit"
	FormatTAP    = "tap"
	FormatCargo  = "cargo"
)

// detectMax bounds how much of head Detect looks at.
const detectMax = 256 << 10

var (
	detectTAPPointRE = regexp.MustCompile(`^(?:not ok|ok)(?:\s+\d+|\s+-\s|\s*$)`)
	detectTAPPlanRE  = regexp.MustCompile(`^1\.\.\d+\s*(?:#.*)?$`)
	detectCargoRE    = regexp.MustCompile(`^(?:running \d+ tests?$|test result: (?:ok|FAILED)\. \d+ passed|test \S.* \.\.\. (?:ok|FAILED|ignored)\b)|^\s*(?:Running (?:unittests )?\S+\.rs \(|Doc-tests \S+$|Starting \d+ tests? across \d+ binar)|^error: could not compile ` + "`")
)

// Detect guesses the format of a test runner's output from its beginning:
// "go-json", "junit", "tap", "cargo", or "" when it is none of them (or
// plain text no parser here reads, like go test -v or pytest's terminal
// output). The guesses, in order: XML whose first element is <testsuites>
// or <testsuite>; a line holding a test2json event (the last, possibly cut,
// line of head is judged by its "Action" and "Package" keys); libtest,
// nextest or cargo build lines; a TAP version line, plan, test point or
// bail out.
func Detect(head []byte) string {
	if len(head) > detectMax {
		head = head[:detectMax]
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if isJUnitHead(head) {
		return FormatJUnit
	}
	lines := strings.Split(string(head), "\n")
	complete := len(lines)
	if !bytes.HasSuffix(head, []byte("\n")) {
		complete-- // the last line may be cut
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "{") {
			continue
		}
		if i < complete {
			var ev struct{ Action, Package, Test, ImportPath string }
			if json.Unmarshal([]byte(t), &ev) == nil && ev.Action != "" &&
				(ev.Package != "" || ev.ImportPath != "" || ev.Test != "" || goActions[ev.Action]) {
				return FormatGoJSON
			}
		} else if strings.Contains(t, `"Action":"`) && (strings.Contains(t, `"Package":"`) || strings.Contains(t, `"ImportPath":"`)) {
			return FormatGoJSON
		}
	}
	tap := false
	for i, l := range lines {
		if i >= complete && i > 0 {
			break
		}
		s := cleanLine(l)
		if detectCargoRE.MatchString(s) {
			return FormatCargo
		}
		if m := nxStatusRE.FindStringSubmatch(s); m != nil {
			if _, ok := nxStatus(m[1], m[2] == ">"); ok {
				return FormatCargo
			}
		}
		if tap {
			continue
		}
		_, t := indentOf(s)
		t = strings.TrimRight(t, " \t")
		if tapVersionRE.MatchString(t) || detectTAPPlanRE.MatchString(t) || detectTAPPointRE.MatchString(t) || strings.HasPrefix(t, "Bail out!") {
			tap = true
		}
	}
	if tap {
		return FormatTAP
	}
	return ""
}

// isJUnitHead: the first element (after the XML declaration, comments,
// doctype and whitespace) is <testsuites> or <testsuite>.
func isJUnitHead(b []byte) bool {
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		switch {
		case bytes.HasPrefix(b, []byte("<?")):
			i := bytes.Index(b, []byte("?>"))
			if i < 0 {
				return false
			}
			b = b[i+2:]
		case bytes.HasPrefix(b, []byte("<!--")):
			i := bytes.Index(b, []byte("-->"))
			if i < 0 {
				return false
			}
			b = b[i+3:]
		case bytes.HasPrefix(b, []byte("<!")):
			i := bytes.IndexByte(b, '>')
			if i < 0 {
				return false
			}
			b = b[i+1:]
		default:
			for _, root := range []string{"<testsuites", "<testsuite"} {
				if bytes.HasPrefix(b, []byte(root)) {
					rest := b[len(root):]
					return len(rest) == 0 || strings.ContainsRune(" \t\r\n>/", rune(rest[0]))
				}
			}
			return false
		}
	}
}
