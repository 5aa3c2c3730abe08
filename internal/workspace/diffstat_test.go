package workspace

import "testing"

func TestSplitNumstat(t *testing.T) {
	for _, tc := range []struct {
		name          string
		out           string
		code, records Stat
	}{
		{"nothing", "", Stat{}, Stat{}},
		{"code only", "1\t1\tcalc/calc.go\x00", Stat{1, 1, 1}, Stat{}},
		{"code and records", "1\t1\tcalc/calc.go\x00135\t0\t.ultra/runs/r1/goals.json\x0010\t0\t.ultra/runs/r1/ledger.jsonl\x00",
			Stat{1, 1, 1}, Stat{2, 145, 0}},
		{"binary", "-\t-\tlogo.png\x003\t0\ta b/c.txt\x00", Stat{2, 3, 0}, Stat{}},
		{"a look-alike is code", "2\t0\t.ultrax/a\x001\t0\tx/.ultra/y\x00", Stat{2, 3, 0}, Stat{}},
		{"garbage", "what\x00\t\x00", Stat{}, Stat{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, records := SplitNumstat(tc.out)
			if code != tc.code || records != tc.records {
				t.Fatalf("got %+v %+v, want %+v %+v", code, records, tc.code, tc.records)
			}
		})
	}
}
