package claim

import (
	"slices"
	"strings"
	"testing"
)

func cl(worker, path string, start, end int) Claim {
	return Claim{Run: "r", Worker: worker, Goal: "G-" + worker, Path: path, Start: start, End: end}
}

func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b Claim
		want bool
	}{
		{"other files", cl("a", "x.go", 0, 0), cl("b", "y.go", 0, 0), false},
		{"whole and whole", cl("a", "x.go", 0, 0), cl("b", "x.go", 0, 0), true},
		{"whole and lines", cl("a", "x.go", 0, 0), cl("b", "x.go", 10, 20), true},
		{"lines and whole", cl("a", "x.go", 10, 20), cl("b", "x.go", 0, 0), true},
		{"apart", cl("a", "x.go", 1, 9), cl("b", "x.go", 10, 20), false},
		{"touching at one line", cl("a", "x.go", 1, 10), cl("b", "x.go", 10, 20), true},
		{"inside", cl("a", "x.go", 12, 13), cl("b", "x.go", 10, 20), true},
		{"after", cl("a", "x.go", 21, 30), cl("b", "x.go", 10, 20), false},
		{"same lines, other case of path", cl("a", "X.go", 1, 5), cl("b", "x.go", 1, 5), false},
	} {
		if got := Overlaps(c.a, c.b); got != c.want {
			t.Errorf("%s: Overlaps = %v, want %v", c.name, got, c.want)
		}
		if got := Overlaps(c.b, c.a); got != c.want {
			t.Errorf("%s (swapped): Overlaps = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestConflictsNameTheHolder(t *testing.T) {
	held := []Claim{cl("w1", "calc.go", 0, 0), cl("w2", "util.go", 10, 20), cl("w3", "own.go", 0, 0)}
	want := []Claim{cl("w3", "calc.go", 5, 6), cl("w3", "util.go", 21, 30), cl("w3", "own.go", 0, 0), cl("w3", "util.go", 15, 15)}
	cs := Conflicts(want, held)
	if len(cs) != 2 {
		t.Fatalf("conflicts %v", cs)
	}
	if s := cs[0].String(); s != "calc.go:5-6 overlaps calc.go, held by worker w1 for goal G-w1" {
		t.Fatalf("conflict text %q", s)
	}
	if h := Holders(cs); !slices.Equal(h, []string{"w1", "w2"}) {
		t.Fatalf("holders %v", h)
	}
}

func TestNewLeavesOutWhatIsHeld(t *testing.T) {
	own := []Claim{cl("w", "a.go", 0, 0), cl("w", "b.go", 10, 20)}
	want := []Claim{cl("w", "a.go", 3, 4), cl("w", "b.go", 12, 15), cl("w", "b.go", 18, 25), cl("w", "c.go", 0, 0)}
	got := New(want, own)
	if len(got) != 2 || got[0].String() != "b.go:18-25" || got[1].String() != "c.go" {
		t.Fatalf("new %v", got)
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"internal/foo.go", "internal/foo.go", ""},
		{"./a//b/../c.go", "a/c.go", ""},
		{`dir\file.go`, "dir/file.go", ""},
		{"", "", "empty"},
		{"/etc/passwd", "", "absolute"},
		{"../x", "", "not a file inside"},
		{"a/../..", "", "not a file inside"},
		{".", "", "not a file inside"},
		{".ultra/runs/x/goals.json", "", "ultra's own"},
		{"a/../.git/config", "", "git's own"},
	} {
		got, err := Normalize(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Normalize(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestWaitCycle(t *testing.T) {
	for _, c := range []struct {
		name    string
		waits   map[string][]string
		worker  string
		holders []string
		want    []string
	}{
		{"nobody waits", nil, "a", []string{"b"}, nil},
		{"a chain without a", map[string][]string{"b": {"c"}}, "a", []string{"b"}, nil},
		{"two", map[string][]string{"b": {"a"}}, "a", []string{"b"}, []string{"a", "b", "a"}},
		{"three", map[string][]string{"b": {"c"}, "c": {"a"}}, "a", []string{"b"}, []string{"a", "b", "c", "a"}},
		{"second holder", map[string][]string{"c": {"a"}}, "a", []string{"b", "c"}, []string{"a", "c", "a"}},
		{"a loop elsewhere", map[string][]string{"b": {"c"}, "c": {"b"}}, "a", []string{"b"}, nil},
	} {
		if got := WaitCycle(c.waits, c.worker, c.holders); !slices.Equal(got, c.want) {
			t.Errorf("%s: WaitCycle = %v, want %v", c.name, got, c.want)
		}
	}
}

const sampleDiff = `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -5 +5 @@ func Add(a, b int) int {
-	return a - b
+	return a + b
@@ -9,0 +10,4 @@ func Sub(a, b int) int {
+
+func Mul(a, b int) int {
+	return a * b
+}
diff --git a/calc/mul_test.go b/calc/mul_test.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/calc/mul_test.go
@@ -0,0 +1,3 @@
+package calc
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 4444444..0000000
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git a/logo.png b/logo.png
index 5555555..6666666 100644
Binary files a/logo.png and b/logo.png differ
diff --git "a/sp ace.go" "b/sp ace.go"
index 7777777..8888888 100644
--- "a/sp ace.go"
+++ "b/sp ace.go"
@@ -2,3 +2,2 @@
-x
`

func TestParseDiff(t *testing.T) {
	ds, err := ParseDiff(sampleDiff)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{
		{Path: "calc/calc.go", Hunks: []Hunk{{5, 1}, {9, 0}}},
		{Path: "calc/mul_test.go", New: true, Hunks: []Hunk{{0, 0}}},
		{Path: "old.txt", Gone: true, Hunks: []Hunk{{1, 2}}},
		{Path: "logo.png", Binary: true},
		{Path: "sp ace.go", Hunks: []Hunk{{2, 3}}},
	}
	if len(ds) != len(want) {
		t.Fatalf("diffs %+v", ds)
	}
	for i := range want {
		if ds[i].Path != want[i].Path || ds[i].New != want[i].New || ds[i].Gone != want[i].Gone || ds[i].Binary != want[i].Binary || !slices.Equal(ds[i].Hunks, want[i].Hunks) {
			t.Errorf("diff %d = %+v, want %+v", i, ds[i], want[i])
		}
	}
	if _, err := ParseDiff("diff --git a/x b/x\n@@ -z +1 @@\n"); err == nil {
		t.Fatal("a broken hunk header was read")
	}
}

// A change of mode alone names its file from the diff's header, and
// needs the whole file claimed, as does a mode change beside changed
// lines that a claim holds.
func TestModeChanges(t *testing.T) {
	diff := "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n" +
		"diff --git \"a/sp ace.sh\" \"b/sp ace.sh\"\nold mode 100644\nnew mode 100755\n" +
		"diff --git a/tool.sh b/tool.sh\nold mode 100644\nnew mode 100755\nindex 1..2\n--- a/tool.sh\n+++ b/tool.sh\n@@ -2 +2 @@\n-x\n+y\n"
	ds, err := ParseDiff(diff)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 || ds[0].Path != "run.sh" || !ds[0].Mode || ds[1].Path != "sp ace.sh" || ds[2].Path != "tool.sh" || !ds[2].Mode || len(ds[2].Hunks) != 1 {
		t.Fatalf("diffs %+v", ds)
	}
	for _, c := range []struct {
		name   string
		claims []Claim
		want   []string
	}{
		{"whole", []Claim{cl("w", "run.sh", 0, 0), cl("w", "sp ace.sh", 0, 0), cl("w", "tool.sh", 0, 0)}, nil},
		{"lines only", []Claim{cl("w", "run.sh", 1, 1), cl("w", "sp ace.sh", 0, 0), cl("w", "tool.sh", 1, 3)},
			[]string{"run.sh (its mode changes: claim it whole)", "tool.sh (its mode changes: claim it whole)"}},
		{"none", nil, []string{"run.sh (not claimed)", "sp ace.sh (not claimed)", "tool.sh (not claimed)"}},
	} {
		if got := Outside(ds, c.claims); !slices.Equal(got, c.want) {
			t.Errorf("%s: Outside = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOutside(t *testing.T) {
	ds, _ := ParseDiff(sampleDiff)
	for _, c := range []struct {
		name   string
		claims []Claim
		want   []string
	}{
		{"everything whole", []Claim{cl("w", "calc/calc.go", 0, 0), cl("w", "calc/mul_test.go", 0, 0), cl("w", "old.txt", 0, 0), cl("w", "logo.png", 0, 0), cl("w", "sp ace.go", 0, 0)}, nil},
		{"nothing", nil, []string{"calc/calc.go (not claimed)", "calc/mul_test.go (not claimed)", "old.txt (not claimed)", "logo.png (not claimed)", "sp ace.go (not claimed)"}},
		{"lines that hold both hunks", []Claim{cl("w", "calc/calc.go", 4, 9), cl("w", "calc/mul_test.go", 1, 1), cl("w", "old.txt", 7, 8), cl("w", "logo.png", 0, 0), cl("w", "sp ace.go", 1, 4)}, nil},
		{"an insertion just past the lines", []Claim{cl("w", "calc/calc.go", 5, 8), cl("w", "calc/mul_test.go", 0, 0), cl("w", "old.txt", 0, 0), cl("w", "logo.png", 0, 0), cl("w", "sp ace.go", 0, 0)},
			[]string{"calc/calc.go:lines inserted after line 9 (outside the lines claimed: 5-8)"}},
		{"two claims that meet", []Claim{cl("w", "calc/calc.go", 1, 5), cl("w", "calc/calc.go", 6, 9), cl("w", "calc/mul_test.go", 0, 0), cl("w", "old.txt", 0, 0), cl("w", "logo.png", 0, 0), cl("w", "sp ace.go", 2, 3)},
			[]string{"sp ace.go:2-4 (outside the lines claimed: 2-3)"}},
		{"a binary file in part", []Claim{cl("w", "calc/calc.go", 0, 0), cl("w", "calc/mul_test.go", 0, 0), cl("w", "old.txt", 0, 0), cl("w", "logo.png", 1, 2), cl("w", "sp ace.go", 0, 0)},
			[]string{"logo.png (a binary file: claim it whole)"}},
	} {
		if got := Outside(ds, c.claims); !slices.Equal(got, c.want) {
			t.Errorf("%s: Outside = %q, want %q", c.name, got, c.want)
		}
	}
}

const goSource = `package calc

// Add adds.
func Add(a, b int) int {
	return a + b
}

type Calc struct{ n int }

// Sum is the sum.
func (c *Calc) Sum() int {
	return c.n
}

const (
	A = 1
	B = 2
)

var Zero = 0
`

func TestSymbolLines(t *testing.T) {
	for _, c := range []struct {
		path, symbol string
		start, end   int
		ok           bool
	}{
		{"calc.go", "Add", 3, 6, true},
		{"calc.go", "Calc", 8, 8, true},
		{"calc.go", "Calc.Sum", 10, 13, true},
		{"calc.go", "Sum", 10, 13, true},
		{"calc.go", "Other.Sum", 0, 0, false},
		{"calc.go", "B", 17, 17, true},
		{"calc.go", "Zero", 20, 20, true},
		{"calc.go", "Missing", 0, 0, false},
		{"calc.py", "Add", 0, 0, false},
	} {
		s, e, ok := SymbolLines(c.path, []byte(goSource), c.symbol)
		if s != c.start || e != c.end || ok != c.ok {
			t.Errorf("SymbolLines(%s, %s) = %d, %d, %v; want %d, %d, %v", c.path, c.symbol, s, e, ok, c.start, c.end, c.ok)
		}
	}
	if _, _, ok := SymbolLines("x.go", []byte("not go"), "Add"); ok {
		t.Fatal("a file that does not parse gave lines")
	}
}

// A changed line is the file's content, never a header: an added line
// "++ b/x" shows as "+++ b/x" and a removed "-- x" as "--- x" in a
// diff without context, and neither names the file the hunk belongs to
// (else a worker that claimed x lands a change to any file by writing
// such a line in it).
func TestParseDiffContentIsNotAHeader(t *testing.T) {
	spoof := "diff --git a/other.txt b/other.txt\nindex 396fd61..9fd2d5d 100644\n--- a/other.txt\n+++ b/other.txt\n" +
		"@@ -2 +2 @@ one\n--- x\n+++ b/claimed.txt\n@@ -3,0 +4 @@ two\n+evil\n" +
		"diff --git a/more.txt b/more.txt\n--- a/more.txt\n+++ b/more.txt\n@@ -1 +1 @@\n-old\n+new file mode 100644\n+Binary files a/claimed.txt and b/claimed.txt differ\n"
	ds, err := ParseDiff(spoof)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{{Path: "other.txt", Hunks: []Hunk{{2, 1}, {3, 0}}}, {Path: "more.txt", Hunks: []Hunk{{1, 1}}}}
	if len(ds) != len(want) {
		t.Fatalf("diffs %+v", ds)
	}
	for i := range want {
		if ds[i].Path != want[i].Path || ds[i].New || ds[i].Gone || ds[i].Binary || !slices.Equal(ds[i].Hunks, want[i].Hunks) {
			t.Errorf("diff %d = %+v, want %+v", i, ds[i], want[i])
		}
	}
	if got := Outside(ds, []Claim{cl("w", "claimed.txt", 0, 0)}); !slices.Equal(got, []string{"other.txt (not claimed)", "more.txt (not claimed)"}) {
		t.Fatalf("Outside = %q", got)
	}
}
