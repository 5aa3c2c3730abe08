package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// How grep reads and searches files: GOMAXPROCS workers take chunks of
// the path-sorted file list from a channel, each reading files into one
// buffer it reuses. Results are collected in path order; in content and
// count modes the search stops as soon as the output limit is reached,
// with workers never more than a bounded window ahead, so the output is
// the same as a search of every file in order.

const (
	grepChunk      = 16      // files a worker takes at a time
	grepWindow     = 8       // chunks in flight per worker when the search may stop early
	grepKeepBuffer = 1 << 20 // larger read buffers are not kept for the next file
	grepLimitStep  = 64      // files between checks of the output limit (a multiple of grepChunk)
)

// bigReads lets one file larger than grepKeepBuffer be in memory at a
// time, bounding grep's memory to about maxGrepFileSize.
var bigReads = make(chan struct{}, 1)

// grepWorker is one worker's reusable state.
type grepWorker struct {
	root    string // the directory rootFD is open on
	rootFD  int
	buf     []byte
	big     bool // buf holds a big file: release bigReads when done
	scan    litScanner
	matched []lineRef
	starts  []int
}

// lineRef is a matching line: its 0-based number (when counted) and
// where it lies in the file.
type lineRef struct {
	n, start, end int
}

type readStatus int

const (
	readOK readStatus = iota
	readSkip
	readLarge
)

// read reads the listed file abs, as statFile allows: a regular file
// reached without leaving root (openBeneath). The data is valid until the
// next read or release.
func (w *grepWorker) read(root, abs string) ([]byte, time.Time, readStatus) {
	w.release()
	if w.root != root {
		w.closeRoot()
		fd, err := openRoot(root)
		if err != nil {
			return nil, time.Time{}, readSkip
		}
		w.root, w.rootFD = root, fd
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, time.Time{}, readSkip
	}
	// One open, no separate stat; anything but a regular file is closed
	// unread.
	fd, err := openBeneath(w.rootFD, root, rel, false)
	if err != nil {
		return nil, time.Time{}, readSkip
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, time.Time{}, readSkip
	}
	mtime := time.Unix(st.Mtim.Unix())
	size := int(st.Size)
	if st.Size > maxGrepFileSize {
		return nil, mtime, readLarge
	}
	if size > grepKeepBuffer {
		bigReads <- struct{}{}
		w.big = true
		w.buf = make([]byte, 0, size+1)
	} else if cap(w.buf) < size+1 {
		w.buf = make([]byte, 0, max(size+1, 64<<10))
	}
	// Read until the size fstat gave, and past it only for a file that
	// reports no size (it might have content all the same).
	buf := w.buf[:cap(w.buf)]
	n := 0
	for n < len(buf) && (n < size || size == 0) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, mtime, readSkip
		}
		if m == 0 {
			break
		}
		n += m
		if size == 0 && n == len(buf) && len(buf) < maxGrepFileSize {
			w.buf = append(buf, make([]byte, len(buf))...)
			buf = w.buf[:cap(w.buf)]
		}
	}
	return buf[:n], mtime, readOK
}

// fileLines bounds the content lines one file keeps: past head_limit, or
// (byteCap) past what maxGrepOutput bytes can show, each shown line being
// at least "rel:N:" and a newline, they are never shown, and keeping them
// would make memory grow with head_limit.
func fileLines(rel string, limit int, byteCap bool) int {
	n := limit + 1
	if byteCap {
		n = min(n, maxGrepOutput/(len(rel)+4)+2)
	}
	return n
}

// closeRoot closes the worker's root directory.
func (w *grepWorker) closeRoot() {
	if w.root != "" {
		unix.Close(w.rootFD)
		w.root = ""
	}
}

// release drops a big buffer and lets the next big file be read.
func (w *grepWorker) release() {
	if cap(w.buf) > grepKeepBuffer {
		w.buf = nil // a big file, or one that said it was empty
	}
	if w.big {
		w.big = false
		<-bigReads
	}
}

// grepFile searches one file. maxLines bounds the content lines kept.
func (w *grepWorker) grepFile(root, rel, abs string, o *grepOpts, maxLines int) fileHit {
	h := fileHit{rel: rel}
	data, mtime, st := w.read(root, abs)
	defer w.release() // a big file's buffer goes at once: other workers may wait for it
	h.mtime = mtime
	switch st {
	case readLarge:
		h.skip = "large"
		return h
	case readSkip:
		return h
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return h
	}
	lits := o.lits
	if lits != nil && lits.fold && !lits.usable(data) {
		lits = nil
	}
	matched := w.matched[:0]
	defer func() { w.matched = matched[:0] }()
	if o.multiline {
		if lits != nil {
			w.scan.reset(lits, data)
			if w.scan.find(0) < 0 {
				return h
			}
		}
		n := -1
		if o.mode == "files_with_matches" {
			n = 1
		}
		line, pos := 0, 0
		for _, m := range o.bufRe.FindAllIndex(data, n) {
			line += bytes.Count(data[pos:m[0]], []byte{'\n'})
			endLine := line + bytes.Count(data[m[0]:max(m[0], m[1]-1)], []byte{'\n'})
			pos = m[0]
			h.count++
			for l := line; l <= endLine; l++ {
				if len(matched) == 0 || matched[len(matched)-1].n < l {
					matched = append(matched, lineRef{n: l, start: -1})
				}
			}
		}
	} else if lits != nil {
		// Find a literal, then test the line holding it.
		w.scan.reset(lits, data)
		line, counted := 0, 0 // line is the number of the line starting at counted
		for pos := 0; pos < len(data); {
			p := w.scan.find(pos)
			if p < 0 {
				break
			}
			ls := pos + bytes.LastIndexByte(data[pos:p], '\n') + 1
			le := len(data)
			if i := bytes.IndexByte(data[p:], '\n'); i >= 0 {
				le = p + i
			}
			if lits.exact || o.lineRe.Match(bytes.TrimSuffix(data[ls:le], []byte{'\r'})) {
				h.count++
				if o.mode == "files_with_matches" {
					break
				}
				if o.mode == "content" {
					line += bytes.Count(data[counted:ls], []byte{'\n'})
					counted = ls
					matched = append(matched, lineRef{n: line, start: ls, end: le})
					if len(matched) >= maxLines {
						break
					}
				}
			}
			pos = le + 1
		}
	} else {
		// The prefilter finds where the first matching line can be. It
		// sees lines with their '\r', so it is not used on CRLF files.
		start := 0
		if o.bufRe != nil && bytes.IndexByte(data, '\r') < 0 {
			loc := o.bufRe.FindIndex(data)
			if loc == nil {
				return h
			}
			start = bytes.LastIndexByte(data[:loc[0]], '\n') + 1
		}
		line := bytes.Count(data[:start], []byte{'\n'})
		for pos := start; pos < len(data); line++ {
			le := len(data)
			if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
				le = pos + i
			}
			if o.lineRe.Match(bytes.TrimSuffix(data[pos:le], []byte{'\r'})) {
				h.count++
				matched = append(matched, lineRef{n: line, start: pos, end: le})
				if o.mode == "files_with_matches" || (o.mode == "content" && len(matched) >= maxLines) {
					break
				}
			}
			pos = le + 1
		}
	}
	if o.mode == "content" && len(matched) > 0 {
		h.lines = w.contentLines(rel, data, matched, o, maxLines)
	}
	return h
}

// contentLines renders matched lines with their context, ripgrep style:
// "path:N:text" for matches, "path-N-text" for context, "--" between
// groups that do not touch.
func (w *grepWorker) contentLines(rel string, data []byte, matched []lineRef, o *grepOpts, maxLines int) []string {
	format := func(n int, text []byte, sep string) string {
		t, cut := truncateRunes(string(bytes.TrimSuffix(text, []byte{'\r'})), maxGrepLineChars)
		if cut {
			t += " …[line truncated]"
		}
		if o.lineNumbers {
			return fmt.Sprintf("%s%s%d%s%s", rel, sep, n+1, sep, t)
		}
		return rel + sep + t
	}
	var out []string
	if o.before == 0 && o.after == 0 && !o.multiline {
		// Matched lines only: no separators.
		for _, m := range matched[:min(len(matched), maxLines)] {
			out = append(out, format(m.n, data[m.start:m.end], ":"))
		}
		return out
	}
	// Where each line starts; the file's lines are those of
	// strings.Split(data, "\n") without a last empty one.
	starts := w.starts[:0]
	for pos := 0; pos < len(data); {
		starts = append(starts, pos)
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			break
		}
		pos += i + 1
	}
	w.starts = starts[:0]
	text := func(l int) []byte {
		line := data[starts[l]:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		return line
	}
	mi := 0 // matched[mi] is the next matched line at or after the one asked about
	isMatch := func(l int) bool {
		for mi < len(matched) && matched[mi].n < l {
			mi++
		}
		return mi < len(matched) && matched[mi].n == l
	}
	prevEnd := -1 // last line written
	kept := 0
	for _, m := range matched {
		from, to := max(0, m.n-o.before), min(len(starts)-1, m.n+o.after)
		if from <= prevEnd {
			from = prevEnd + 1
		} else if prevEnd >= 0 {
			out = append(out, "--")
		}
		for l := from; l <= to; l++ {
			sep := "-"
			if isMatch(l) {
				sep = ":"
			}
			out = append(out, format(l, text(l), sep))
			kept++
		}
		prevEnd = max(prevEnd, to)
		if kept >= maxLines {
			break
		}
	}
	if o.before == 0 && o.after == 0 {
		// No context: separators would only be noise.
		kept := out[:0]
		for _, l := range out {
			if l != "--" {
				kept = append(kept, l)
			}
		}
		out = kept
	}
	return out
}

// searchFiles greps the files rels (path-sorted, with their absolute
// paths abss) and returns the files with matches in that order. In
// content and count modes it stops once the output is full: more entries
// than limit (content lines, "--" separators included, or files), when
// capped reports it, or more than maxGrepOutput bytes when byteCap.
func searchFiles(ctx context.Context, root string, rels, abss []string, o *grepOpts, limit int, byteCap bool) (hits []fileHit, capped bool, large int) {
	n := len(rels)
	results := make([]fileHit, n)
	chunks := (n + grepChunk - 1) / grepChunk
	workers := max(1, min(runtime.GOMAXPROCS(0), chunks))
	window := chunks
	if o.mode != "files_with_matches" {
		window = grepWindow * workers
	}
	jobs := make(chan int, window)
	done := make(chan int, window)
	var stop sync.WaitGroup
	var quit = make(chan struct{})
	for range workers {
		stop.Go(func() {
			w := &grepWorker{}
			defer w.closeRoot()
			defer w.release()
			for c := range jobs {
				select {
				case <-quit:
				default:
					if ctx.Err() == nil {
						for i := c * grepChunk; i < min(n, (c+1)*grepChunk); i++ {
							results[i] = w.grepFile(root, rels[i], abss[i], o, fileLines(rels[i], limit, byteCap))
						}
					}
				}
				done <- c
			}
		})
	}
	finished := make([]bool, chunks)
	sent, next := 0, 0
	entries, bytesOut := 0, 0
consume:
	for next < chunks {
		if sent < chunks && sent < next+window {
			select {
			case jobs <- sent:
				sent++
				continue
			case c := <-done:
				finished[c] = true
			}
		} else {
			finished[<-done] = true
		}
		for next < sent && finished[next] {
			for i := next * grepChunk; i < min(n, (next+1)*grepChunk); i++ {
				h := results[i]
				results[i] = fileHit{}
				if h.skip == "large" {
					large++
				}
				if h.count == 0 {
					continue
				}
				hits = append(hits, h)
				if o.mode == "content" {
					entries += len(h.lines)
					for _, l := range h.lines {
						bytesOut += len(l) + 1
					}
				} else {
					entries++
				}
			}
			next++
			// The limit is checked after every grepLimitStep files, as
			// the output has always been cut; the output size too,
			// since lines past maxGrepOutput bytes would not be shown.
			if o.mode != "files_with_matches" && ((next*grepChunk)%grepLimitStep == 0 || next == chunks) {
				if entries > limit {
					capped = true
					break consume
				}
				if byteCap && bytesOut > maxGrepOutput {
					break consume
				}
			}
		}
	}
	close(quit)
	close(jobs)
	stop.Wait()
	return hits, capped, large
}

// noOutputCap is the context key of WithoutOutputCap.
type noOutputCap struct{}

// WithoutOutputCap returns a context in which grep's output is bounded by
// head_limit only, not by its size (maxGrepOutput): for `ultra dev tool`,
// never for a model's calls.
func WithoutOutputCap(ctx context.Context) context.Context {
	return context.WithValue(ctx, noOutputCap{}, true)
}

// outputCapped reports whether grep's output size is capped in ctx.
func outputCapped(ctx context.Context) bool {
	return ctx.Value(noOutputCap{}) == nil
}
