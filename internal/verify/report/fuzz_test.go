package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// fuzzParser checks what holds for any input: no panic, a nil Report only
// with an error, and the invariants of a Report (counts match the cases,
// Executed()+Skipped == len(Cases), unique names, bounded messages).
func fuzzParser(t *testing.T, parse func(io.Reader) (*Report, error), data []byte) {
	r, err := parse(bytes.NewReader(data))
	if r == nil {
		if err == nil {
			t.Fatal("nil report without an error")
		}
		if errors.Is(err, ErrTruncated) {
			t.Fatalf("ErrTruncated without a report: %v", err)
		}
		return
	}
	checkInvariants(t, r)
	for _, c := range r.Cases {
		if len(c.Name) > maxName+16 || len(c.Suite) > maxName || len(c.File) > maxName {
			t.Fatalf("unbounded name/suite/file in %q", c.Name)
		}
	}
	// Parsing is deterministic.
	r2, err2 := parse(bytes.NewReader(data))
	if !reflect.DeepEqual(r, r2) || (err == nil) != (err2 == nil) {
		t.Fatal("two parses of the same input differ")
	}
}

func FuzzGoJSON(f *testing.F) {
	for _, s := range []string{goSubtests, goBuildFailed, goOldBuildFailed, goSetupFailed, goPanic, goInitPanic, goTimeout,
		goCount2, goTestMainExit, goBinary, goSubtests[:len(goSubtests)/2], "",
		// a parent, its subtest and a grandchild, all failing; a parent passing with a skipped child
		"{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"T\"}\n{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"T/a\"}\n" +
			"{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"T/a/b\"}\n{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T/a/b\"}\n" +
			"{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T/a\"}\n{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T\"}\n" +
			"{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"U\"}\n{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"U/s\"}\n" +
			"{\"Action\":\"skip\",\"Package\":\"p\",\"Test\":\"U/s\"}\n{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"U\"}\n" +
			"{\"Action\":\"fail\",\"Package\":\"p\"}\n",
		goForgedTestMain, goForgedFramedAfterRun, goForgedBareReport, goForgedAfterRun + goForgedAfterRun,
		"{\"ACtion\":\"output\",\"Test\":\"\\n\"}", // found by fuzzing: a name that cleans to ""
		// found by fuzzing: a package's fail then pass (two runs concatenated)
		"{\"Action\":\"fail\",\"Package\":\"0\"}\n{\"Action\":\"pass\",\"Package\":\"0\"}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParser(t, GoJSON, data)
		// No false completion: a failure event always yields a failed or
		// errored case.
		if goHasFailEvent(data) {
			if r, _ := GoJSON(bytes.NewReader(data)); r == nil || r.Failed+r.Errors == 0 {
				t.Fatalf("a fail event and no failure: %+v", r)
			}
		}
	})
}

func FuzzJUnit(f *testing.F) {
	for _, s := range []string{pytestXunit1, pytestXunit2, jestJUnit, vitestJUnit, surefireFoo, surefireBar, gradleJUnit,
		ctestJUnit, junitOddities, surefireFoo[:len(surefireFoo)/2], surefireFoo + surefireBar, "",
		pytestCollectionXML, vitestLoadFailuresXML, ctestNotBuiltXML, pytestDoctestXunit1, pytestDoctestXunit2,
		pytestDoctestXunit1[:len(pytestDoctestXunit1)/2]} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParser(t, JUnit, data)
		// Split in two documents at an arbitrary point.
		half := len(data) / 2
		r, err := JUnitFiles(bytes.NewReader(data[:half]), bytes.NewReader(data[half:]))
		if r == nil && err == nil {
			t.Fatal("JUnitFiles: nil report without an error")
		}
		checkInvariants(t, r)
	})
}

func FuzzTAP(f *testing.F) {
	for _, s := range []string{nodeTAP, batsTAP, proveTAP, tapeTAP, tapeRepeatsTAP, nodeTapTAP, tapBailOut, nodeTAP[:len(nodeTAP)/2],
		"1..0 # SKIP\n", "ok 1 - a \\# b # TODO x\n", "", nodeLoadFailuresTAP, nodeLoadFailuresTAP[:len(nodeLoadFailuresTAP)/2]} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParser(t, TAP, data)
		// No false completion: a "not ok" without directive always yields a
		// failed case (inputs with YAML blocks or a bail out excepted: their
		// lines are not all test points).
		if tapHasNotOK(data) {
			if r, _ := TAP(bytes.NewReader(data)); r == nil || r.Failed == 0 {
				t.Fatalf("a not ok and no failure: %+v", r)
			}
		}
	})
}

func FuzzCargo(f *testing.F) {
	for _, s := range []string{cargoTest, cargoTestBacktrace, cargoCompileError, cargoCrash, cargoStackOverflow, nextestOld,
		nextestNew, cargoTest[:len(cargoTest)/2], "", cargoTargetCompileError, cargoDoctests, cargoDoctests[:len(cargoDoctests)/2]} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParser(t, Cargo, data)
		// No false completion: a FAILED test line or a compile error always
		// yields a failed or errored case (outside captured output, which
		// inputs with "----", "failures:" or nextest lines may have).
		if cargoHasFailure(data) {
			if r, _ := Cargo(bytes.NewReader(data)); r == nil || r.Failed+r.Errors == 0 {
				t.Fatalf("a failure line and no failure: %+v", r)
			}
		}
	})
}

func FuzzDetect(f *testing.F) {
	for _, s := range []string{goSubtests, goOldBuildFailed, pytestXunit1, surefireFoo, ctestJUnit, nodeTAP, batsTAP, proveTAP,
		cargoTest, nextestNew, cargoCompileError, "", "<testsuite", "{\"Action\":\"run\",\"Package\":\"x\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		switch got := Detect(data); got {
		case "", FormatGoJSON, FormatJUnit, FormatTAP, FormatCargo:
		default:
			t.Fatalf("Detect = %q", got)
		}
	})
}

func goHasFailEvent(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
			continue
		}
		var ev goEvent
		if json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		if ev.Action == "fail" || ev.Action == "build-fail" && ev.ImportPath != "" {
			return true
		}
	}
	return false
}

func tapHasNotOK(data []byte) bool {
	found := false
	for _, l := range strings.Split(string(data), "\n") {
		_, t := indentOf(cleanLine(l))
		t = strings.TrimRight(t, " \t")
		if t == "---" || strings.HasPrefix(t, "Bail out!") {
			return false
		}
		if strings.HasPrefix(t, "not ok") && !strings.Contains(t, "#") && tapPointRE.MatchString(t) {
			found = true
		}
	}
	return found
}

func cargoHasFailure(data []byte) bool {
	found := false
	for _, l := range strings.Split(string(data), "\n") {
		s := cleanLine(l)
		t := strings.TrimSpace(s)
		if strings.HasPrefix(t, "---") || t == "failures:" || nxStatusRE.MatchString(s) {
			return false
		}
		if m := cargoTestRE.FindStringSubmatch(s); m != nil && m[2] == "FAILED" || cargoCompileRE.MatchString(s) {
			found = true
		}
	}
	return found
}
