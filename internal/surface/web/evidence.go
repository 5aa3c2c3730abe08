package web

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// imageTypes are the evidence files served as what they are; every other
// file is served as plain text. Evidence is what the model's programs
// printed or drew: a page of it must never run as the API's own origin.
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
}

// evidence serves one evidence file of a run: GOAL/CRITERION/LABEL/NAME
// under the run's evidence folder (ultra goals --json gives each file's
// path, which ends so), never through a link or out of the folder.
func (s *Server) evidence(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runParam(w, r)
	if !ok {
		return
	}
	rel := r.PathValue("path")
	if rel == "" || path.Clean(rel) != rel || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, "..") || strings.Contains(rel, "\\") {
		s.fail(w, http.StatusBadRequest, "the evidence path "+rel+" is not a path inside the run's evidence (GOAL/CRITERION/LABEL/NAME)")
		return
	}
	if s.o.EvidenceRoot == "" {
		s.fail(w, http.StatusNotFound, "no evidence here")
		return
	}
	// The folders on the way are ultra's: a link in their place (a
	// repository can commit one) is not followed.
	for _, d := range []string{s.o.EvidenceRoot, filepath.Join(s.o.EvidenceRoot, id)} {
		if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
			s.fail(w, http.StatusNotFound, "run "+id+" has no evidence folder of ultra's")
			return
		}
	}
	root, err := os.OpenRoot(filepath.Join(s.o.EvidenceRoot, id))
	if errors.Is(err, fs.ErrNotExist) {
		s.fail(w, http.StatusNotFound, "run "+id+" has no evidence")
		return
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer root.Close()
	// Lstat each step: os.Root keeps a path inside, and a link (which a
	// check's program could have left) is refused, not followed.
	parts := strings.Split(rel, "/")
	for i := range parts {
		fi, err := root.Lstat(strings.Join(parts[:i+1], "/"))
		if err != nil {
			s.fail(w, http.StatusNotFound, "no evidence file "+rel+" in run "+id)
			return
		}
		if fi.Mode()&fs.ModeSymlink != 0 || (i == len(parts)-1 && !fi.Mode().IsRegular()) {
			s.fail(w, http.StatusNotFound, "evidence "+rel+" of run "+id+" is not a plain file")
			return
		}
	}
	f, err := root.Open(rel)
	if err != nil {
		s.fail(w, http.StatusNotFound, "no evidence file "+rel+" in run "+id)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	h := w.Header()
	ct, ok := imageTypes[strings.ToLower(path.Ext(rel))]
	if !ok {
		ct = "text/plain; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, max-age=3600")
	http.ServeContent(w, r, "", fi.ModTime(), f)
}
