package web

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Token is the installation's API token kept at path (in ultra's
// per-user state, which no sandbox shows), made the first time: 32 random
// bytes as hex, in a file only its owner reads. A token file others could
// read, or one that is not a plain file, is refused, not used.
func Token(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("the API token's folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return makeToken(path)
	}
	if errors.Is(err, syscall.ELOOP) {
		return "", fmt.Errorf("the API token %s is a symbolic link: ultra reads it only from a file of its own; remove the link and ultra serve makes a new token", path)
	}
	if err != nil {
		return "", fmt.Errorf("the API token %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the API token %s is %v: it must be a file only you can read (chmod 600 %s, or remove it and ultra serve makes a new one)", path, fi.Mode(), path)
	}
	b := make([]byte, 256)
	n, _ := f.Read(b)
	tok := strings.TrimSpace(string(b[:n]))
	if len(tok) < 32 {
		return "", fmt.Errorf("the API token %s is too short (%d characters): remove it and ultra serve makes a new one", path, len(tok))
	}
	return tok, nil
}

func makeToken(path string) (string, error) {
	tok := random()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, os.ErrExist) {
		return Token(path) // another ultra serve made it first
	}
	if err != nil {
		return "", fmt.Errorf("making the API token %s: %w", path, err)
	}
	_, werr := f.WriteString(tok + "\n")
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		os.Remove(path)
		return "", fmt.Errorf("making the API token %s: %w", path, werr)
	}
	return tok, nil
}
