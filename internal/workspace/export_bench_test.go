package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkExportTree is the cost of the gate's clean checkout on a
// repository of 10,000 files (100 directories of 100 files of 1 KiB).
func BenchmarkExportTree(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	git(b, dir, "init", "-q")
	body := make([]byte, 1024)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		os.MkdirAll(sub, 0o755)
		for f := range 100 {
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), append([]byte(fmt.Sprint(d, f)), body...), 0o644)
		}
	}
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-qm", "10k files")
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		dest := filepath.Join(out, fmt.Sprint(n))
		if err := ExportTree(ctx, dir, tree, dest); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dest)
		b.StartTimer()
	}
}
