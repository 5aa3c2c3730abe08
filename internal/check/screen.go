package check

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// screen is one capture of a desktop check's screen: the PNG, and the
// words tesseract read on it.
type screen struct {
	png   []byte
	words []word
	text  string // the words, a line of the screen per line
	x, y  int    // where a click on found text goes
}

// word is one word tesseract read, with its box.
type word struct {
	line            string // block.paragraph.line
	text            string
	left, top, w, h int
}

// capture takes a screenshot of the whole screen (ImageMagick's import)
// and reads its text (tesseract, sparse text: a desktop is not a page).
func (d *desk) capture() (*screen, error) {
	d.n++
	p := filepath.Join(d.dir, fmt.Sprintf("screen-%d.png", d.n))
	if _, err := d.tool("import", "-window", "root", "png:"+p); err != nil {
		return nil, err
	}
	png, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(p)
	if !isPNG(png) {
		return nil, fmt.Errorf("the screenshot is not a PNG (%d bytes)", len(png))
	}
	pp := filepath.Join(d.dir, fmt.Sprintf("ocr-%d.png", d.n))
	if err := os.WriteFile(pp, png, 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(pp)
	tsv, err := d.tool("tesseract", pp, "stdout", "--psm", "11", "tsv")
	if err != nil {
		return nil, err
	}
	sc := &screen{png: png, words: parseTSV(string(tsv))}
	sc.text = screenText(sc.words)
	return sc, nil
}

// isPNG reports that b starts with the PNG signature.
func isPNG(b []byte) bool {
	return len(b) > 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n"
}

// parseTSV reads tesseract's tsv output: the words (level 5) that have
// text, in reading order.
func parseTSV(tsv string) []word {
	var out []word
	for i, l := range strings.Split(tsv, "\n") {
		f := strings.Split(strings.TrimRight(l, "\r"), "\t")
		if i == 0 || len(f) < 12 || f[0] != "5" {
			continue
		}
		text := strings.TrimSpace(f[11])
		if text == "" {
			continue
		}
		n := make([]int, 10)
		ok := true
		for j := 1; j <= 9; j++ {
			v, err := strconv.Atoi(f[j])
			if err != nil {
				ok = false
				break
			}
			n[j] = v
		}
		if !ok {
			continue
		}
		out = append(out, word{line: f[2] + "." + f[3] + "." + f[4], text: text, left: n[6], top: n[7], w: n[8], h: n[9]})
	}
	return out
}

// screenText is the words a line each, the lines from the top of the
// screen down (tesseract's order within a line).
func screenText(ws []word) string {
	type line struct {
		top   int
		words []string
	}
	var order []string
	lines := map[string]*line{}
	for _, w := range ws {
		l := lines[w.line]
		if l == nil {
			l = &line{top: w.top}
			lines[w.line] = l
			order = append(order, w.line)
		}
		l.top = min(l.top, w.top)
		l.words = append(l.words, w.text)
	}
	sort.SliceStable(order, func(i, j int) bool { return lines[order[i]].top < lines[order[j]].top })
	var b strings.Builder
	for _, k := range order {
		b.WriteString(strings.Join(lines[k].words, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// locate finds text (its words, in a row of one line) on the screen and
// returns the middle of their box.
func (sc *screen) locate(text string) (x, y int, ok bool) {
	want := strings.Fields(text)
	if len(want) == 0 {
		return 0, 0, false
	}
	for i := range sc.words {
		if i+len(want) > len(sc.words) {
			break
		}
		run := sc.words[i : i+len(want)]
		match := true
		for j, w := range run {
			if w.line != run[0].line || w.text != want[j] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		l, t, r, b := run[0].left, run[0].top, run[0].left+run[0].w, run[0].top+run[0].h
		for _, w := range run[1:] {
			l, t = min(l, w.left), min(t, w.top)
			r, b = max(r, w.left+w.w), max(b, w.top+w.h)
		}
		return (l + r) / 2, (t + b) / 2, true
	}
	return 0, 0, false
}
