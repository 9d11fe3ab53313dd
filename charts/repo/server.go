package repo

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Server serves one set of charts, packaged when it was made.
type Server struct {
	charts   []Chart
	index    []byte
	archives map[string]Chart // by file name
	made     time.Time
}

// New packages every chart of fsys (each directory at its top level that
// has a Chart.yaml; other entries are skipped) and makes the index. now
// is when the index was generated, and the created time of charts whose
// files have no modification time.
func New(fsys fs.FS, now time.Time) (*Server, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	s := &Server{archives: map[string]Chart{}, made: now}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := fs.Stat(fsys, e.Name()+"/Chart.yaml"); err != nil {
			continue
		}
		c, err := Package(fsys, e.Name(), now)
		if err != nil {
			return nil, err
		}
		if _, dup := s.archives[c.FileName()]; dup {
			return nil, fmt.Errorf("two charts are %s %s", c.Name, c.Version)
		}
		s.charts = append(s.charts, c)
		s.archives[c.FileName()] = c
	}
	if len(s.charts) == 0 {
		return nil, fmt.Errorf("no chart (a directory with a Chart.yaml) found")
	}
	if s.index, err = Index(s.charts, now); err != nil {
		return nil, err
	}
	return s, nil
}

// Charts names the charts served, NAME-VERSION, sorted.
func (s *Server) Charts() []string {
	var names []string
	for _, c := range s.charts {
		names = append(names, c.Name+"-"+c.Version)
	}
	sort.Strings(names)
	return names
}

// ServeHTTP answers GET and HEAD of /index.yaml and of each archive, as a
// static file server would (Helm asks nothing else); anything else is 404,
// and other methods 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	switch c, ok := s.archives[name]; {
	case name == "index.yaml":
		w.Header().Set("Content-Type", "application/x-yaml")
		http.ServeContent(w, r, name, s.made, bytes.NewReader(s.index))
	case ok:
		w.Header().Set("Content-Type", "application/gzip")
		http.ServeContent(w, r, name, c.Created, bytes.NewReader(c.Archive))
	default:
		http.NotFound(w, r)
	}
}
