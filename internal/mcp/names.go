package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Prefix starts the name of every tool a server brings (Claude Code's
// naming: mcp__SERVER__TOOL).
const Prefix = "mcp__"

// IsTool says name is a server's tool as ultra offers it.
func IsTool(name string) bool { return strings.HasPrefix(name, Prefix) }

// ToolName is how ultra offers server's tool to the model: mcp__S__T,
// with what model APIs refuse in a name (anything but letters, digits, _
// and -) turned into _, and at most 64 characters (a long name keeps a
// hash of the whole).
func ToolName(server, tool string) string {
	n := Prefix + Clean(server) + "__" + Clean(tool)
	if len(n) <= 64 {
		return n
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return n[:55] + "_" + hex.EncodeToString(sum[:4])
}

// Clean is s with every character but letters, digits, _ and - made _:
// a name fit for a tool's name or a file's.
func Clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// clip cuts s to n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
