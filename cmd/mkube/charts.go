package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mkube/mkube/charts"
	"github.com/mkube/mkube/charts/repo"
)

// runServeCharts serves mkube's charts (package charts), or those of
// --dir, as a Helm chart repository until it is stopped: the port of the
// old `helm serve`, 8879, by default.
//
//	mkube serve-charts [--listen 127.0.0.1:8879] [--dir DIR]
func runServeCharts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("serve-charts", flag.ContinueOnError)
	fset.SetOutput(stderr)
	listen := fset.String("listen", "127.0.0.1:8879", "the address to serve the repository at")
	dir := fset.String("dir", "", "serve the charts in this directory (one subdirectory per chart) instead of mkube's own")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "error: serve-charts takes no arguments, got %q\n", fset.Args())
		return 2
	}
	var source fs.FS = charts.FS
	if *dir != "" {
		source = os.DirFS(*dir)
	}
	s, err := repo.New(source, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Serving %s as a chart repository at http://%s\n", strings.Join(s.Charts(), ", "), ln.Addr())
	fmt.Fprintf(stdout, "  helm repo add stable http://%s\n", ln.Addr())
	srv := &http.Server{Handler: logRequests(s, stdout), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// logRequests prints a line per request, as `helm serve` did, so that
// a learner sees what `helm repo update` and `helm install` fetch.
func logRequests(h http.Handler, out io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		fmt.Fprintf(out, "%s %s %s %d\n", time.Now().UTC().Format(time.RFC3339), r.Method, r.URL.Path, rec.status)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
