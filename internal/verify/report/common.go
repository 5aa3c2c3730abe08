package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrTruncated is wrapped by a parser's error when the input is of the
// parser's format but stops (or becomes unreadable) mid-way: XML left
// unterminated, a go test -json test or package with no result, a TAP plan
// promising more tests than were seen, a libtest binary that printed
// "running N tests" and never its "test result:" line. The Report returned
// alongside holds everything read before that point.
var ErrTruncated = errors.New("output ends mid-way (truncated)")

// ErrNotFormat is wrapped by a parser's error, returned with a nil Report,
// when the input is not in the parser's format at all (no test2json event,
// no <testsuite> element, no TAP line, no libtest or nextest line).
var ErrNotFormat = errors.New("not in this format")

// errNotFormat builds the error returned, with a nil Report, when the input
// is not in a parser's format at all.
func errNotFormat(format, why string) error {
	return fmt.Errorf("%s: %w: %s", format, ErrNotFormat, why)
}

// Failing returns the failed and errored cases, in order.
func (r *Report) Failing() []Case {
	if r == nil {
		return nil
	}
	var out []Case
	for _, c := range r.Cases {
		if c.Status == Failed || c.Status == Error {
			out = append(out, c)
		}
	}
	return out
}

// Merge concatenates reports: cases in order, counts summed, formats joined
// by "+" (each distinct format once, in order of appearance). Nil reports
// are ignored. Case names are left as they are.
func Merge(rs ...*Report) *Report {
	out := &Report{}
	var formats []string
	seen := map[string]bool{}
	for _, r := range rs {
		if r == nil {
			continue
		}
		out.Cases = append(out.Cases, r.Cases...)
		out.Passed += r.Passed
		out.Failed += r.Failed
		out.Skipped += r.Skipped
		out.Errors += r.Errors
		for _, f := range strings.Split(r.Format, "+") {
			if f != "" && !seen[f] {
				seen[f] = true
				formats = append(formats, f)
			}
		}
	}
	out.Format = strings.Join(formats, "+")
	return out
}

// add appends a case and counts it.
func (r *Report) add(c Case) {
	switch c.Status {
	case Passed:
		r.Passed++
	case Failed:
		r.Failed++
	case Skipped:
		r.Skipped++
	case Error:
		r.Errors++
	default:
		c.Status = Error
		r.Errors++
	}
	c.Name = cleanText(c.Name)
	if c.Name == "" {
		c.Name = "(unnamed)"
	}
	c.Suite = cleanText(c.Suite)
	c.File = cleanText(c.File)
	if c.Line < 0 {
		c.Line = 0
	}
	if c.Duration < 0 {
		c.Duration = 0
	}
	if len(c.Message) > MaxMessage {
		c.Message = clip(c.Message, MaxMessage)
	}
	r.Cases = append(r.Cases, c)
}

// uniquify makes case names unique: the second and later cases with a
// name already used get " #2", " #3", … appended, in order, so the result
// is stable for the same input.
func uniquify(cases []Case) {
	used := make(map[string]int, len(cases))
	for _, c := range cases {
		used[c.Name]++
	}
	if len(used) == len(cases) {
		return
	}
	seen := make(map[string]bool, len(cases))
	next := map[string]int{}
	for i := range cases {
		name := cases[i].Name
		if !seen[name] {
			seen[name] = true
			continue
		}
		n := next[name]
		if n < 2 {
			n = 2
		}
		for {
			cand := name + " #" + strconv.Itoa(n)
			n++
			if !seen[cand] && used[cand] == 0 {
				cases[i].Name = cand
				seen[cand] = true
				break
			}
		}
		next[name] = n
	}
}

// ---- text ----

// maxLine bounds one line of input; the rest of a longer line is dropped.
const maxLine = 1 << 20

// ReadLines calls fn with each line of r, with its line ending, bounded to
// 1 MiB (the rest of a longer line is dropped). A last line without a
// line ending is passed when it is not empty.
func ReadLines(r io.Reader, fn func(string)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxLine - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(buf) > 0 {
			fn(string(buf))
		}
		buf = buf[:0]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLines calls fn with each line of r, without its line ending; a last
// line without one that is empty once a "\r" is removed is not passed.
func readLines(r io.Reader, fn func(string)) error {
	return ReadLines(r, func(raw string) {
		s := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		if s != "" || strings.HasSuffix(raw, "\n") {
			fn(s)
		}
	})
}

var (
	ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_]`)
	// pytest's junitxml writes ESC as the text "#x1B".
	pytestANSIRE = regexp.MustCompile(`#x1[bB]\[[0-9;?]*[ -/]*[@-~]`)
)

// stripANSI removes terminal colour and control sequences.
func stripANSI(s string) string {
	if strings.Contains(s, "#x1") {
		s = pytestANSIRE.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	s = ansiRE.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, "\x1b", "")
}

// cleanLine removes colour codes and carriage-return redraws from one line
// of terminal output (only what is visible last remains).
func cleanLine(s string) string {
	s = strings.TrimRight(s, "\r")
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	return stripANSI(s)
}

// cleanText makes a short string (name, suite, file) printable: no
// colours, valid UTF-8, no line breaks or NULs, bounded length.
func cleanText(s string) string {
	s = stripANSI(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.ContainsAny(s, "\r\n\x00") {
		s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\x00", "").Replace(s)
	}
	s = strings.TrimSpace(s)
	if len(s) > maxName {
		s = clip(s, maxName)
	}
	return s
}

// maxName bounds Case.Name, Suite and File.
const maxName = 1 << 10

// clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) {
		i = n
	}
	return s[:i]
}

// seconds converts a duration in (fractional) seconds, tolerating garbage.
func seconds(f float64) time.Duration {
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	const maxSeconds = 1e8 // ~3 years
	if f > maxSeconds {
		f = maxSeconds
	}
	return time.Duration(f * float64(time.Second))
}

// parseSeconds parses "1.234", "1,234.5" (thousands separators) or "" (0).
func parseSeconds(s string) time.Duration {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "s"))
	if s == "" {
		return 0
	}
	if strings.Contains(s, ",") {
		if strings.Contains(s, ".") {
			s = strings.ReplaceAll(s, ",", "")
		} else {
			s = strings.ReplaceAll(s, ",", ".") // decimal comma
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return seconds(f)
}

// atoi parses a positive line number; 0 when it is not one.
func atoi(s string) int {
	if len(s) > 9 {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ---- locations ----

// loc is a source location.
type loc struct {
	file string
	line int
}

func (l loc) ok() bool { return l.file != "" }

// locRE finds "path/file.ext:12" (optionally ":col") preceded by start of
// text, a space, an opening bracket or quote, "file://" or "at ".
var locRE = regexp.MustCompile(`(?:^|[\s(\[<'"=])(?:file://)?((?:[A-Za-z]:[\\/])?[^\s:()<>'"\[\]]*[^\s:()<>'"\[\]./\\]\.[A-Za-z][A-Za-z0-9]{0,5}):(\d{1,7})\b`)

// javaFrameRE matches a JVM stack frame "at pkg.Class.method(File.java:12)".
var javaFrameRE = regexp.MustCompile(`\bat ([\w$.<>/]+)\(([\w$-]+\.(?:java|kt|kts|scala|groovy|clj)):(\d+)\)`)

// perlLocRE matches Perl's "at t/basic.t line 8." and bats'
// "(in test file test/a.bats, line 7)".
var perlLocRE = regexp.MustCompile(`\b(?:in test file|in file|at) (\S+?),? line (\d+)\b`)

// ignoredLoc reports locations inside runtimes, dependencies and
// standard libraries, which are never where a test failed.
func ignoredLoc(file string) bool {
	for _, s := range []string{"node_modules/", "node_modules\\", "site-packages/", "dist-packages/", "/rustc/", "/.cargo/registry/",
		"/.rustup/", "/usr/lib/", "/usr/local/go/src/", "/go/src/runtime/", "/go/src/testing/", "/src/testing/testing.go", "/jdk/", "<anonymous>"} {
		if strings.Contains(file, s) {
			return true
		}
	}
	return strings.HasPrefix(file, "internal/") || strings.HasPrefix(file, "node:")
}

// findLoc returns the first location in text that is not in a runtime or a
// dependency; failing that, the first location at all.
func findLoc(text string) loc {
	var first loc
	for _, m := range locRE.FindAllStringSubmatch(text, 64) {
		l := loc{file: m[1], line: atoi(m[2])}
		if l.line == 0 {
			continue
		}
		if !ignoredLoc(l.file) {
			return l
		}
		if !first.ok() {
			first = l
		}
	}
	if m := perlLocRE.FindStringSubmatch(text); m != nil && !first.ok() {
		return loc{file: strings.Trim(m[1], "'\"`"), line: atoi(m[2])}
	}
	return first
}

// ---- bounded messages ----

const (
	keyLines   = 8   // relevant lines kept once the head is full, each way
	keyLineMax = 240 // bytes per kept relevant line
)

// strongWords mark lines that say what went wrong (assertion, panic,
// exception, expected/actual); weakRE marks lines that say where.
var (
	strongWords = []string{"panic", "assert", "expect", "received", "want", "got ", "error", "exception", "traceback",
		"fail", "left:", "right:", "actual", "timed out", "timeout"}
	weakRE = regexp.MustCompile(`\.[A-Za-z]\w{0,5}:\d+`)
)

// strongLine reports whether a line says what went wrong.
func strongLine(line string) bool {
	if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, "E ") { // pytest
		return true
	}
	low := strings.ToLower(clip(line, 512))
	for _, w := range strongWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// msgBuf accumulates a failure message with bounded memory: the first
// MaxMessage bytes of lines, then (when that is full) the first strong
// lines and the last relevant lines, so that the assertion or panic line of
// a huge output survives.
type msgBuf struct {
	head      []byte
	headFull  bool
	strong    []keyLine
	last      [keyLines]keyLine // ring of the last relevant lines
	nlast     int
	seq       int
	omitted   int // bytes of lines not in head
	lines     int
	lastBlank bool
}

type keyLine struct {
	seq  int
	text string
}

// addText adds text that may hold several lines.
func (m *msgBuf) addText(s string) {
	if s == "" {
		return
	}
	s = strings.TrimSuffix(s, "\n")
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			m.addLine(s)
			return
		}
		m.addLine(s[:i])
		s = s[i+1:]
	}
}

// addLine adds one line (without its newline).
func (m *msgBuf) addLine(line string) {
	line = stripANSI(strings.TrimRight(line, "\r"))
	blank := strings.TrimSpace(line) == ""
	if blank && (m.lastBlank || m.lines == 0) {
		return // no leading blank lines, no runs of them
	}
	m.lastBlank = blank
	m.seq++
	m.lines++
	if !m.headFull {
		need := len(line)
		if len(m.head) > 0 {
			need++
		}
		if len(m.head)+need <= MaxMessage {
			if len(m.head) > 0 {
				m.head = append(m.head, '\n')
			}
			m.head = append(m.head, line...)
			return
		}
		m.headFull = true
		if len(m.head) == 0 { // one huge line: keep its beginning
			m.head = append(m.head, clip(line, MaxMessage/2)...)
			m.omitted += len(line) - len(m.head)
			return
		}
	}
	m.omitted += len(line) + 1
	strong := strongLine(line)
	if !strong && (strings.IndexByte(line, ':') < 0 || !weakRE.MatchString(clip(line, 512))) {
		return
	}
	kl := keyLine{seq: m.seq, text: clip(strings.TrimSpace(line), keyLineMax)}
	if kl.text == "" {
		return
	}
	if strong && len(m.strong) < keyLines {
		m.strong = append(m.strong, kl)
		return
	}
	m.last[m.nlast%keyLines] = kl
	m.nlast++
}

func (m *msgBuf) empty() bool { return m == nil || m.lines == 0 }

// String renders the message, at most MaxMessage bytes.
func (m *msgBuf) String() string {
	if m == nil {
		return ""
	}
	head := string(m.head)
	if !m.headFull {
		return strings.TrimRight(head, "\n ")
	}
	// The kept lines, in their original order.
	kept := append([]keyLine(nil), m.strong...)
	for i := max(0, m.nlast-keyLines); i < m.nlast; i++ {
		kept = append(kept, m.last[i%keyLines])
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].seq < kept[j].seq })
	key := make([]string, len(kept))
	for i, k := range kept {
		key[i] = k.text
	}
	marker := "\n… [" + strconv.Itoa(m.omitted) + " bytes omitted] …"
	tail := strings.Join(key, "\n")
	if tail != "" {
		marker += "\n"
	}
	tail = clip(tail, MaxMessage/2)
	room := MaxMessage - len(marker) - len(tail)
	head = clip(strings.TrimRight(head, "\n "), room)
	return clip(head+marker+tail, MaxMessage)
}
