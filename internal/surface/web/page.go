package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed page
var pageFiles embed.FS

// page serves the web page: its files are in the binary, so it needs no
// network. The page itself holds no secret; it reads the token from its
// address once and sends it as a header on every API request.
func (s *Server) page(mux *http.ServeMux) {
	sub, err := fs.Sub(pageFiles, "page")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
}
