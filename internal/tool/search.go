package tool

import (
	"bytes"
	"encoding/binary"
	"maps"
	"math/bits"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds grep's literal prefilter. Go's regexp engine is slow
// (tens of MB/s, far less with case folding), so grep first looks for a
// literal every match must contain, found with SIMD byte scans, and runs
// the regular expression only on the lines that hold it. A pattern that is
// itself a literal needs no regular expression at all.

// litFilter is a prefilter derived from a pattern: every match contains
// one of lits (compared ASCII case-insensitively when fold).
type litFilter struct {
	lits []needle
	// exact: a line matches the pattern exactly when it contains one of
	// lits (the pattern is a literal, or an alternation of literals).
	exact bool
	fold  bool
	// special are the UTF-8 forms of non-ASCII runes that fold to ASCII
	// letters of lits (K, the Kelvin sign, folds to k; ſ to s). A file
	// holding one is searched without the prefilter.
	special [][]byte
}

// needle is one literal with the byte a scan looks for first: the rarest
// one, in both cases when fold.
type needle struct {
	s      []byte // fold: ASCII letters in lower case
	guard  int
	g0, g1 byte
	// pair: look for the two rarest bytes (pa < pb) together, eight
	// positions at a time, rather than for the guard byte alone: for a
	// guard byte so common that stopping at each one would cost more.
	pair   bool
	pa, pb int
}

// pairAbove is the frequency (per million, both cases with fold) of a
// guard byte above which a needle is looked for by indexPair: at about
// 0.5%, one IndexByte scan per guard byte found is as slow as the pair
// scan (~4 GB/s).
const pairAbove = 5000

const (
	maxLitSet    = 8  // most literals one prefilter looks for
	maxLitLen    = 64 // longest literal kept in a cross product
	maxClassLits = 8  // largest character class expanded into literals
)

// newLitFilter derives the prefilter of pattern, as regexp.Compile parses
// it (flags is "(?i)" or ""), or returns nil when it finds none.
func newLitFilter(pattern string, ignoreCase bool) *litFilter {
	expr := pattern
	if ignoreCase {
		expr = "(?i)" + pattern
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	fold := hasFoldCase(re)
	x := &litExtractor{fold: fold}
	info := x.walk(re)
	lits := info.effective()
	if len(lits) == 0 || len(lits) > maxLitSet {
		return nil
	}
	f := &litFilter{fold: fold}
	specials := map[string]bool{}
	for _, s := range lits {
		f.lits = append(f.lits, makeNeedle([]byte(s), fold))
		if fold {
			for _, c := range []byte(s) {
				for _, r := range foldSpecials[c] {
					specials[string(r)] = true
				}
			}
		}
	}
	for _, s := range slices.Sorted(maps.Keys(specials)) {
		f.special = append(f.special, []byte(s))
	}
	// Exact when the pattern is a literal or an alternation of them.
	root := re
	for root.Op == syntax.OpCapture {
		root = root.Sub[0]
	}
	switch {
	case fold:
		f.exact = root.Op == syntax.OpLiteral && root.Flags&syntax.FoldCase != 0 && info.pure && info.exact != nil
	default:
		f.exact = info.pure && info.exact != nil && !slices.Contains(info.exact, "")
	}
	for _, n := range f.lits {
		if bytes.ContainsAny(n.s, "\r\n") {
			f.exact = false
		}
	}
	return f
}

// hasFoldCase reports whether any part of re matches case-insensitively.
func hasFoldCase(re *syntax.Regexp) bool {
	if re.Flags&syntax.FoldCase != 0 && (re.Op == syntax.OpLiteral || re.Op == syntax.OpCharClass) {
		return true
	}
	for _, s := range re.Sub {
		if hasFoldCase(s) {
			return true
		}
	}
	return false
}

// foldSpecials maps an ASCII byte to the non-ASCII runes in its simple
// case folding orbit.
var foldSpecials = func() map[byte][]rune {
	m := map[byte][]rune{}
	for c := rune(0); c < utf8.RuneSelf; c++ {
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf {
				lc := byte(unicode.ToLower(c))
				m[lc] = append(m[lc], r)
				m[byte(unicode.ToUpper(c))] = m[lc]
			}
		}
	}
	return m
}()

// litInfo is what a node tells about the literals of its matches.
type litInfo struct {
	exact []string // the node matches exactly these strings (nil: unknown or too many)
	req   []string // every match contains one of these (nil: none known)
	pure  bool     // exact holds no assertion (^, $, \b) that exact ignores
}

// effective is the best set of literals one of which every match holds.
func (i litInfo) effective() []string {
	if i.exact != nil && !slices.Contains(i.exact, "") {
		return i.exact
	}
	return i.req
}

// better reports whether a is a better literal set than b: longer
// shortest literal, then fewer literals.
func better(a, b []string) bool {
	if len(a) == 0 || slices.Contains(a, "") {
		return false
	}
	if len(b) == 0 {
		return true
	}
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(ss []string) int {
	m := -1
	for _, s := range ss {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

type litExtractor struct {
	fold bool // compare case-insensitively: keep literals in lower case
}

func (x *litExtractor) norm(s string) string {
	if x.fold {
		return asciiLower(s)
	}
	return s
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (x *litExtractor) walk(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return litInfo{exact: []string{""}, pure: true}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{exact: []string{""}}
	case syntax.OpLiteral:
		return x.literal(re)
	case syntax.OpCharClass:
		var out []string
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > maxClassLits {
				return litInfo{}
			}
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r == utf8.RuneError || r > unicode.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
					return litInfo{}
				}
				s := x.norm(string(r))
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		if len(out) == 0 {
			return litInfo{}
		}
		return litInfo{exact: out, req: out, pure: true}
	case syntax.OpCapture:
		return x.walk(re.Sub[0])
	case syntax.OpConcat:
		return x.concat(re.Sub)
	case syntax.OpAlternate:
		var exact, req []string
		exactOK, reqOK, pure := true, true, true
		for _, s := range re.Sub {
			i := x.walk(s)
			pure = pure && i.pure
			if exactOK && i.exact != nil {
				exact = union(exact, i.exact)
				exactOK = len(exact) <= maxLitSet
			} else {
				exactOK = false
			}
			if e := i.effective(); reqOK && e != nil {
				req = union(req, e)
				reqOK = len(req) <= maxLitSet
			} else {
				reqOK = false
			}
		}
		out := litInfo{pure: pure}
		if exactOK {
			out.exact = exact
		}
		if reqOK {
			out.req = req
		}
		return out
	case syntax.OpQuest:
		i := x.walk(re.Sub[0])
		if i.exact == nil || len(i.exact) >= maxLitSet {
			return litInfo{}
		}
		return litInfo{exact: union([]string{""}, i.exact), pure: i.pure}
	case syntax.OpPlus:
		return litInfo{req: x.walk(re.Sub[0]).effective()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return litInfo{req: x.walk(re.Sub[0]).effective()}
		}
	}
	return litInfo{}
}

// literal handles a literal node. A case-insensitive one keeps only its
// ASCII runes (non-ASCII ones fold to other byte sequences), so it is
// exact only when all its runes are ASCII.
func (x *litExtractor) literal(re *syntax.Regexp) litInfo {
	fold := re.Flags&syntax.FoldCase != 0
	var pieces []string
	var cur strings.Builder
	whole := true
	for _, r := range re.Rune {
		if r == utf8.RuneError || (fold && r >= utf8.RuneSelf) {
			whole = false
			if cur.Len() > 0 {
				pieces = append(pieces, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		pieces = append(pieces, cur.String())
	}
	if whole {
		s := x.norm(string(re.Rune))
		return litInfo{exact: []string{s}, req: []string{s}, pure: true}
	}
	best := ""
	for _, p := range pieces {
		if len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return litInfo{}
	}
	return litInfo{req: []string{x.norm(best)}}
}

// concat joins the literals of consecutive parts into a cross product
// while it stays small and keeps the best literal set seen.
func (x *litExtractor) concat(subs []*syntax.Regexp) litInfo {
	cur := []string{""}
	var best []string
	exactAll, pure := true, true
	flush := func() {
		if better(cur, best) {
			best = cur
		}
		cur = []string{""}
	}
	for _, s := range subs {
		i := x.walk(s)
		pure = pure && i.pure
		if i.exact != nil {
			if p := product(cur, i.exact); p != nil {
				cur = p
				continue
			}
			flush()
			exactAll = false
			cur = i.exact
			continue
		}
		exactAll = false
		flush()
		if e := i.effective(); better(e, best) {
			best = e
		}
	}
	out := litInfo{pure: pure}
	if exactAll {
		out.exact = cur
	}
	flush()
	out.req = best
	return out
}

// product is the cross product of two literal sets, or nil when too big.
func product(a, b []string) []string {
	if len(a)*len(b) > maxLitSet {
		return nil
	}
	var out []string
	for _, x := range a {
		for _, y := range b {
			if len(x)+len(y) > maxLitLen {
				return nil
			}
			if s := x + y; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// byteFreq is how often each byte occurs in source code, per million
// bytes (of the Go, Python and Perl sources installed with those
// languages; NUL and other control bytes as 0).
var byteFreq = [256]uint32{
	0, 0, 0, 0, 0, 0, 0, 0, 0, 25679, 31169, 0, 0, 3, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	177536, 1023, 8727, 1863, 1494, 754, 901, 5428, 10509, 10502, 1732, 1160, 19983, 3414, 13071, 8808,
	28231, 11592, 9325, 6729, 6690, 4693, 6310, 4037, 5493, 4210, 9349, 1591, 1122, 8078, 1915, 180,
	239, 10261, 3521, 5523, 4559, 7413, 3615, 2057, 1931, 5767, 407, 952, 4421, 3855, 4025, 4911,
	4219, 899, 5510, 6704, 7013, 2309, 2857, 1301, 1992, 1193, 512, 2505, 4063, 2500, 146, 8733,
	604, 29810, 7832, 17493, 16017, 51430, 15729, 9226, 9660, 28572, 745, 3866, 19379, 10978, 30461, 26195,
	12868, 869, 32128, 27912, 39688, 14216, 5348, 3962, 15845, 6492, 1032, 4737, 1156, 4718, 158, 0,
	35, 22, 27, 19, 11, 15, 13, 15, 24, 12, 11, 6, 9, 6, 7, 18,
	9, 11, 8, 10, 15, 14, 22, 12, 14, 18, 7, 6, 13, 14, 8, 41,
	8, 8, 6, 7, 12, 10, 9, 11, 7, 13, 8, 8, 9, 8, 8, 6,
	7, 12, 10, 10, 8, 8, 7, 135, 34, 23, 10, 9, 16, 10, 11, 6,
	0, 0, 148, 21, 3, 3, 0, 1, 0, 2, 2, 0, 5, 2, 39, 11,
	50, 18, 0, 0, 0, 1, 6, 16, 19, 21, 1, 1, 0, 0, 0, 0,
	35, 15, 103, 20, 4, 8, 11, 6, 5, 2, 2, 1, 1, 0, 0, 4,
	42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
}

// passCost is the cost of one IndexByte scan over a byte, in the unit of
// byteFreq's cost of stopping at a candidate (a scan is ~0.06 ns a byte,
// a candidate ~15 ns).
const passCost = 4000

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// makeNeedle picks the rarest byte of s to scan for. With fold, a letter
// is scanned for in both cases (two scans), so other bytes are preferred.
func makeNeedle(s []byte, fold bool) needle {
	n := needle{s: s}
	best := uint32(1 << 31)
	var freq []uint32
	for i, c := range s {
		f := byteFreq[c]
		score := f + passCost
		if fold && isLower(c) {
			f += byteFreq[c-'a'+'A']
			score += byteFreq[c-'a'+'A'] + passCost
		}
		freq = append(freq, f)
		if score < best {
			best, n.guard = score, i
		}
	}
	if len(s) > 1 {
		a, b := 0, 1
		if freq[b] < freq[a] {
			a, b = b, a
		}
		for i := 2; i < len(s); i++ {
			if freq[i] < freq[a] {
				a, b = i, a
			} else if freq[i] < freq[b] {
				b = i
			}
		}
		n.pa, n.pb = min(a, b), max(a, b)
		n.pair = freq[n.guard] > pairAbove
	}
	n.g0, n.g1 = s[n.guard], s[n.guard]
	if fold && isLower(n.g0) {
		n.g1 = n.g0 - 'a' + 'A'
	}
	return n
}

// index returns where n first occurs in data at or after from, or -1.
func (n *needle) index(data []byte, from int, fold bool) int {
	if n.pair {
		return n.indexPair(data, from, fold)
	}
	L := len(n.s)
	lo, hi := from+n.guard, len(data)-(L-1-n.guard) // where the guard byte may be
	if lo >= hi {
		return -1
	}
	if n.g0 == n.g1 {
		for lo < hi {
			j := bytes.IndexByte(data[lo:hi], n.g0)
			if j < 0 {
				return -1
			}
			start := lo + j - n.guard
			if matchAt(data[start:start+L], n.s, fold) {
				return start
			}
			lo += j + 1
		}
		return -1
	}
	// Two scans, one per case of the guard letter, each resumed where it
	// stopped: every byte is looked at once by each.
	p0, p1 := -2, -2
	for lo < hi {
		if p0 != -1 && p0 < lo {
			p0 = indexFrom(data[:hi], lo, n.g0)
		}
		if p1 != -1 && p1 < lo {
			p1 = indexFrom(data[:hi], lo, n.g1)
		}
		p := p0
		if p < 0 || (p1 >= 0 && p1 < p) {
			p = p1
		}
		if p < 0 {
			return -1
		}
		start := p - n.guard
		if matchAt(data[start:start+L], n.s, true) {
			return start
		}
		lo = p + 1
	}
	return -1
}

func indexFrom(data []byte, from int, c byte) int {
	if j := bytes.IndexByte(data[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// matchAt compares b with the literal s; with fold, ASCII letters of b
// compare in lower case (s is lower case already).
func matchAt(b, s []byte, fold bool) bool {
	if !fold {
		return bytes.Equal(b, s)
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// litScanner finds the literals of a filter in one buffer, in order.
type litScanner struct {
	f    *litFilter
	data []byte
	next []int // per literal: its next occurrence (-1: none left, -2: not looked for)
}

func (s *litScanner) reset(f *litFilter, data []byte) {
	s.f, s.data = f, data
	s.next = s.next[:0]
	for range f.lits {
		s.next = append(s.next, -2)
	}
}

// find returns the start of the first literal occurrence at or after
// from, or -1.
func (s *litScanner) find(from int) int {
	best := -1
	for i := range s.f.lits {
		p := s.next[i]
		if p == -1 {
			continue
		}
		if p < from {
			p = s.f.lits[i].index(s.data, from, s.f.fold)
			s.next[i] = p
			if p < 0 {
				continue
			}
		}
		if best < 0 || p < best {
			best = p
		}
	}
	return best
}

// usable reports whether the prefilter may be used on data: with fold, a
// file holding a non-ASCII rune that folds to one of its letters must be
// searched without it.
func (f *litFilter) usable(data []byte) bool {
	for _, sp := range f.special {
		if bytes.Contains(data, sp) {
			return false
		}
	}
	return true
}

// indexPair finds, from from, the first start at which the needle's two
// rarest bytes (pa < pb, compared case-insensitively with fold) are in
// place and the whole needle matches. It tests eight positions at a time
// in a word (SWAR), so common bytes cost little.
func (n *needle) indexPair(data []byte, from int, fold bool) int {
	L := len(n.s)
	g1, g2 := n.pa, n.pb
	d := g2 - g1
	m1, t1 := swarCase(n.s[g1], fold)
	m2, t2 := swarCase(n.s[g2], fold)
	i := from + g1            // position of the first guard byte
	end := len(data) - L + g1 // last position it may have
	const lo7, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+15 <= end; i += 16 {
		// Two words a round; d ≤ L-1, so i+d+16 ≤ len(data).
		a, b := data[i:i+16], data[i+d:i+d+16]
		// A byte of x (of y, for the second word) is zero where both
		// guard bytes are in place.
		x := ((binary.LittleEndian.Uint64(a) | m1) ^ t1) | ((binary.LittleEndian.Uint64(b) | m2) ^ t2)
		y := ((binary.LittleEndian.Uint64(a[8:]) | m1) ^ t1) | ((binary.LittleEndian.Uint64(b[8:]) | m2) ^ t2)
		zx := (x - lo7) & ^x & hi
		zy := (y - lo7) & ^y & hi
		if zx|zy == 0 {
			continue
		}
		for z := zx; z != 0; z &= z - 1 {
			start := i + bits.TrailingZeros64(z)/8 - g1
			if matchAt(data[start:start+L], n.s, fold) {
				return start
			}
		}
		for z := zy; z != 0; z &= z - 1 {
			start := i + 8 + bits.TrailingZeros64(z)/8 - g1
			if matchAt(data[start:start+L], n.s, fold) {
				return start
			}
		}
	}
	for ; i+d+8 <= len(data) && i+7 <= end; i += 8 {
		w1 := binary.LittleEndian.Uint64(data[i:]) | m1
		w2 := binary.LittleEndian.Uint64(data[i+d:]) | m2
		x := (w1 ^ t1) | (w2 ^ t2)
		z := (x - lo7) & ^x & hi
		for z != 0 {
			k := bits.TrailingZeros64(z) / 8
			z &= z - 1
			start := i + k - g1
			if matchAt(data[start:start+L], n.s, fold) {
				return start
			}
		}
	}
	for ; i <= end; i++ {
		start := i - g1
		if matchAt(data[start:start+L], n.s, fold) {
			return start
		}
	}
	return -1
}

// swarCase returns the mask to OR a word with and the word to compare it
// to, to find byte c in each byte of the word, case-insensitively with
// fold when c is a (lower-case) letter.
func swarCase(c byte, fold bool) (mask, target uint64) {
	const ones = 0x0101010101010101
	if fold && isLower(c) {
		return 0x20 * ones, uint64(c) * ones
	}
	return 0, uint64(c) * ones
}
