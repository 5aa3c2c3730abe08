package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxInstructions bounds the project instructions put in the system prompt.
const MaxInstructions = 32 << 10

// instructionFiles are read in each directory, in this order.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// LoadInstructions collects the project's instructions for agents: AGENTS.md
// (and CLAUDE.md when present) in every directory from root down to dir,
// outermost first, capped at MaxInstructions bytes in all.
func LoadInstructions(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	dirs := []string{root}
	if rel != "." {
		cur := root
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, part)
			dirs = append(dirs, cur)
		}
	}
	var b strings.Builder
	for _, d := range dirs {
		for _, name := range instructionFiles {
			data, err := os.ReadFile(filepath.Join(d, name))
			if err != nil || len(strings.TrimSpace(string(data))) == 0 {
				continue
			}
			relPath, _ := filepath.Rel(root, filepath.Join(d, name))
			fmt.Fprintf(&b, "<instructions file=%q>\n%s\n</instructions>\n", relPath, strings.TrimSpace(string(data)))
		}
	}
	s := b.String()
	if len(s) > MaxInstructions {
		cut := MaxInstructions
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "\n… [project instructions truncated at 32 KiB]\n"
	}
	return s
}
