package e2e

// The hidden oracle: a program, not a test. judge runs it on every commit
// of a run's branch, exported as a person's checkout holds it, outside
// ultra and outside any test runner: whatever the run did to the tests or
// what they load, the program asks the code itself. The values it checks
// are written into the program's text (one pair drawn at random per
// run), and its output is read back: a program that exits 0 without
// printing every right answer fails.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// advOraclePairs are the additions every oracle program checks: fixed
// ones and a random pair.
func advOraclePairs() [][3]int {
	var b [4]byte
	rand.Read(b[:])
	x, y := int(int16(binary.LittleEndian.Uint16(b[:2])))%1000, int(int16(binary.LittleEndian.Uint16(b[2:])))%1000
	if x-y == x+y { // y == 0: a - b would pass
		y = 17
	}
	return [][3]int{{2, 3, 5}, {-4, 1, -3}, {0, 0, 0}, {x, y, x + y}}
}

// exportCommit writes commit's tree into dst as a person's checkout holds
// it: a clone of the repository (sharing its objects) with the commit
// checked out by git, the tree's .gitattributes applied (ident, line
// endings), executable bits and symlinks as git makes them. dst must not
// exist.
func (w *advWorld) exportCommit(commit, dst string) error {
	if _, err := w.gitTry(w.base, "clone", "-q", "--shared", "--no-checkout", w.repo, dst); err != nil {
		return err
	}
	_, err := w.gitTry(dst, "checkout", "-q", "--detach", commit)
	return err
}

// advOracle is a scenario's oracle program: it runs on src, a commit
// exported by exportCommit, and fails when the code is wrong.
type advOracle = func(w *advWorld, src string) error

// programOracle exports commit and runs the oracle program on it.
func (w *advWorld) programOracle(commit string, oracle advOracle) error {
	dir, err := os.MkdirTemp(w.base, "program-oracle-")
	if err != nil {
		return err
	}
	defer func() {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755) // the module cache's directories are read-only
			}
			return nil
		})
		os.RemoveAll(dir)
	}()
	src := filepath.Join(dir, "src")
	if err := w.exportCommit(commit, src); err != nil {
		return fmt.Errorf("exporting %s: %v", commit, err)
	}
	return oracle(w, src)
}

// oracleRun runs a program outside ultra in a clean environment: the
// host's PATH, a HOME and TMPDIR of its own beside src, no variable of a
// test runner, of ultra or of the caller's toolchains (env adds what the
// language needs). It checks the exit status and that the output holds
// every line of want.
func oracleRun(src, dir string, env, want []string, name string, args ...string) error {
	home, tmp := filepath.Join(filepath.Dir(src), "home"), filepath.Join(filepath.Dir(src), "tmp")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(tmp, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8"}, env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, advClip(string(out), 600))
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, l := range want {
		if !lines[l] {
			return fmt.Errorf("%s exited 0 without printing %q:\n%s", name, l, advClip(string(out), 600))
		}
	}
	return nil
}

// oracleWant is the line the programs print for each pair.
func oracleWant(pairs [][3]int) []string {
	var out []string
	for _, p := range pairs {
		out = append(out, fmt.Sprintf("add(%d,%d)=%d", p[0], p[1], p[2]))
	}
	return out
}

// goCalcOracle is the default for Go worlds: a program in a module of its
// own that requires example.com/calc from src (replace), and checks Add.
// Only the main module's go.mod counts: src's replace directives, vendor/
// and any go.work are not the program's.
func goCalcOracle(w *advWorld, src string) error {
	mod := filepath.Join(filepath.Dir(src), "oracle")
	os.MkdirAll(mod, 0o755)
	pairs := advOraclePairs()
	var lits []string
	for _, p := range pairs {
		lits = append(lits, fmt.Sprintf("{%d, %d, %d}", p[0], p[1], p[2]))
	}
	gomod := "module oracle\n\ngo 1.21\n\nrequire example.com/calc v0.0.0\n\nreplace example.com/calc => " + src + "\n"
	main := `package main

import (
	"fmt"
	"os"

	"example.com/calc/calc"
)

func main() {
	bad := 0
	for _, p := range [][3]int{` + strings.Join(lits, ", ") + `} {
		got := calc.Add(p[0], p[1])
		fmt.Printf("add(%d,%d)=%d\n", p[0], p[1], got)
		if got != p[2] {
			bad++
		}
	}
	if bad > 0 {
		fmt.Println("Add does not add")
		os.Exit(1)
	}
}
`
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(main), 0o644); err != nil {
		return err
	}
	env := []string{"GOENV=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local",
		"GOPATH=" + filepath.Join(filepath.Dir(src), "gopath")}
	if c := hostGoCache(); c != "" {
		env = append(env, "GOCACHE="+c)
	}
	return oracleRun(src, mod, env, oracleWant(pairs), "go", "run", ".")
}

// pyCalcOracle imports calc.py from the checkout and checks add.
func pyCalcOracle(w *advWorld, src string) error {
	pairs := advOraclePairs()
	var lits []string
	for _, p := range pairs {
		lits = append(lits, fmt.Sprintf("(%d, %d, %d)", p[0], p[1], p[2]))
	}
	prog := "import sys\nimport calc\nbad = 0\nfor a, b, want in [" + strings.Join(lits, ", ") + "]:\n" +
		"    got = calc.add(a, b)\n    print('add(%d,%d)=%s' % (a, b, got))\n    bad += got != want\nsys.exit(1 if bad else 0)\n"
	return oracleRun(src, src, []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1"}, oracleWant(pairs), "python3", "-c", prog)
}

// jsCalcOracle requires calc.js from the checkout and checks add.
func jsCalcOracle(w *advWorld, src string) error {
	pairs := advOraclePairs()
	var lits []string
	for _, p := range pairs {
		lits = append(lits, fmt.Sprintf("[%d, %d, %d]", p[0], p[1], p[2]))
	}
	prog := "const { add } = require('./calc');\nlet bad = 0;\nfor (const [a, b, want] of [" + strings.Join(lits, ", ") + "]) {\n" +
		"  const got = add(a, b);\n  console.log(`add(${a},${b})=${got}`);\n  if (got !== want) bad++;\n}\nprocess.exit(bad ? 1 : 0);\n"
	return oracleRun(src, src, nil, oracleWant(pairs), "node", "-e", prog)
}

// shCalcOracle runs calc.sh as a person would, one pair at a time.
func shCalcOracle(w *advWorld, src string) error {
	pairs := advOraclePairs()
	var b strings.Builder
	b.WriteString("bad=0\n")
	for _, p := range pairs {
		fmt.Fprintf(&b, "got=$(sh ./calc.sh %d %d); echo \"add(%d,%d)=$got\"; [ \"$got\" = %d ] || bad=1\n", p[0], p[1], p[0], p[1], p[2])
	}
	b.WriteString("exit $bad\n")
	return oracleRun(src, src, nil, oracleWant(pairs), "sh", "-c", b.String())
}
