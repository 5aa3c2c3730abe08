package check

import "testing"

// tesseract's tsv: a header, page/block/paragraph/line rows (levels 1-4)
// and words (level 5), some empty.
const sampleTSV = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
	"1\t1\t0\t0\t0\t0\t0\t0\t1024\t768\t-1\t\n" +
	"5\t1\t1\t1\t1\t1\t212\t68\t56\t18\t96.1\tSave\n" +
	"5\t1\t2\t1\t1\t1\t150\t120\t70\t18\t95.0\tSaved\n" +
	"5\t1\t2\t1\t1\t2\t228\t120\t12\t18\t95.0\t3\n" +
	"5\t1\t2\t1\t1\t3\t248\t124\t60\t14\t95.0\titems\n" +
	"5\t1\t2\t1\t1\t4\t320\t120\t10\t18\t10.0\t \n" +
	"5\t1\t3\t1\t1\t1\t40\t20\t60\t14\t90.0\tTitle\n" +
	"5\t1\t3\t1\t1\tx\t40\t20\t60\t14\t90.0\tbad\n"

func TestParseTSV(t *testing.T) {
	sc := &screen{words: parseTSV(sampleTSV)}
	if len(sc.words) != 5 {
		t.Fatalf("words %+v, want 5", sc.words)
	}
	// Lines from the top down, words in order.
	if got, want := screenText(sc.words), "Title\nSave\nSaved 3 items\n"; got != want {
		t.Errorf("screenText = %q, want %q", got, want)
	}
	tests := []struct {
		text string
		x, y int
		ok   bool
	}{
		{"Save", 240, 77, true},
		{"Saved 3 items", 229, 129, true},
		{"  Saved   3 ", 195, 129, true},
		{"3 items", 268, 129, true},
		{"save", 0, 0, false},        // case counts
		{"Sav", 0, 0, false},         // whole words
		{"items Title", 0, 0, false}, // not across lines
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		x, y, ok := sc.locate(tt.text)
		if ok != tt.ok || x != tt.x || y != tt.y {
			t.Errorf("locate(%q) = %d, %d, %v; want %d, %d, %v", tt.text, x, y, ok, tt.x, tt.y, tt.ok)
		}
	}
}

func TestIsPNG(t *testing.T) {
	if !isPNG([]byte("\x89PNG\r\n\x1a\n\x00")) || isPNG([]byte("\x89PNG")) || isPNG([]byte("GIF89a....")) {
		t.Error("isPNG")
	}
}
