package workspace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// ReadTree lists the files of tree (slash-separated paths, sorted as git
// sorts them: links, regular and executable files; not submodules) and
// reads, in one git process, the regular files want asks for (by path and
// size in bytes). dir is any directory of the repository.
func ReadTree(ctx context.Context, dir, tree string, want func(path string, size int64) bool) ([]string, map[string][]byte, error) {
	out, err := Command(ctx, dir, "ls-tree", "-r", "-z", "-l", "--full-tree", tree).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("git ls-tree %s: %w", Short(tree), err)
	}
	var paths, shas, read []string
	for _, e := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		fs := strings.Fields(meta)
		if !ok || len(fs) != 4 || fs[1] != "blob" {
			continue
		}
		paths = append(paths, p)
		if fs[0] != "100644" && fs[0] != "100755" {
			continue
		}
		size, err := strconv.ParseInt(fs[3], 10, 64)
		if err == nil && want(p, size) {
			shas, read = append(shas, fs[2]), append(read, p)
		}
	}
	files := map[string][]byte{}
	if len(shas) == 0 {
		return paths, files, nil
	}
	cmd := Command(ctx, dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(shas, "\n") + "\n")
	raw, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the files of %s: %w", Short(tree), err)
	}
	r := bufio.NewReader(bytes.NewReader(raw))
	for _, p := range read {
		head, err := r.ReadString('\n')
		fs := strings.Fields(head)
		if err != nil || len(fs) != 3 {
			return nil, nil, fmt.Errorf("reading %s: git cat-file said %q", p, head)
		}
		n, err := strconv.Atoi(fs[2])
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", p, err)
		}
		body := make([]byte, n+1) // the content and its newline
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", p, err)
		}
		files[p] = body[:n]
	}
	return paths, files, nil
}

// Blob is the content of path in tree, byte for byte.
func Blob(ctx context.Context, dir, tree, path string) (string, error) {
	out, err := Command(ctx, dir, "cat-file", "blob", tree+":"+path).Output()
	if err != nil {
		return "", fmt.Errorf("git cat-file %s:%s: %w", Short(tree), path, err)
	}
	return string(out), nil
}

// FilesContaining are those of paths (files of tree) whose content holds
// text, read by git grep in one process.
func FilesContaining(ctx context.Context, dir, tree, text string, paths []string) (map[string]bool, error) {
	files := map[string]bool{}
	if len(paths) == 0 {
		return files, nil
	}
	args := append([]string{"grep", "-l", "-z", "-F", "-e", text, tree, "--"}, paths...)
	cmd := Command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, "GIT_LITERAL_PATHSPECS=1") // paths, not patterns
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && len(out) == 0 {
		return files, nil // none does
	}
	if err != nil {
		return nil, fmt.Errorf("git grep in %s: %w", Short(tree), err)
	}
	for _, e := range strings.Split(string(out), "\x00") {
		// "<tree>:<path>"
		if _, p, ok := strings.Cut(e, ":"); ok {
			files[p] = true
		}
	}
	return files, nil
}
