package catalog

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// The images of Kubernetes' autoscaling walkthrough and tests, whose
// whole point is the CPU they use (the container's cgroup accounting,
// shell.CPU): registry.k8s.io/hpa-example, the php-apache server of the
// docs' HorizontalPodAutoscaler walkthrough, and the resource-consumer
// of Kubernetes' HPA e2e tests (resourceconsumer.go).

// Per-request CPU of the servers: what their real handlers spend, so
// that a Service under load shows it in its pods' usage.
const (
	// staticFileCPU is nginx's or httpd's cost of a small static file
	// (some 20,000 requests per second on a core).
	staticFileCPU = 50 * time.Microsecond
	// goHandlerCPU is a small Go net/http handler's (agnhost's servers).
	goHandlerCPU = 100 * time.Microsecond
	// hpaExampleCPU is index.php's loop of a million square roots in PHP
	// 5: some 0.15 CPU-seconds.
	hpaExampleCPU = 150 * time.Millisecond
)

// withCPU charges each request's handling, cost, to the container's CPU
// at once: a request this short is never held back by the quota.
func withCPU(p *shell.Process, cost time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.CPU().Charge(cost)
		h.ServeHTTP(w, r)
	})
}

// hpaExampleImage is registry.k8s.io/hpa-example: php:5-apache with one
// page, /var/www/html/index.php, which adds up a million square roots
// before it prints "OK!". Each request costs the container about 0.15
// CPU-seconds, and takes that long (longer under a limit below one core:
// 0.3 s at 500m), so the walkthrough's load generator (`while sleep
// 0.01; do wget -q -O- http://php-apache; done`) keeps a pod busy and the
// HPA scales the Deployment out.
func hpaExampleImage() Image {
	return Image{
		Entrypoint: []string{"docker-php-entrypoint"},
		Cmd:        []string{"apache2-foreground"},
		Env: []string{"PATH=" + stdPath, "PHP_INI_DIR=/usr/local/etc/php", "APACHE_CONFDIR=/etc/apache2",
			"APACHE_ENVVARS=/etc/apache2/envvars", "PHP_VERSION=5.6.40"},
		WorkingDir: "/var/www/html",
		Ports:      []int32{80},
		StopSignal: "SIGWINCH",
		Files:      map[string]string{"/var/www/html/index.php": hpaExampleIndex},
		Programs: map[string]shell.Program{
			// docker-php-entrypoint runs apache2-foreground, or what it is given.
			"docker-php-entrypoint": func(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
				return p.Exec(ctx, args)
			},
			"apache2-foreground": apache2Foreground,
		},
		Serve: hpaExampleServe,
	}
}

// hpaExampleIndex is what the image's index.php does, in its words.
const hpaExampleIndex = `<?php
  $x = 0.0001;
  for ($i = 0; $i <= 1000000; $i++) {
    $x += sqrt($x);
  }
  echo "OK!";
?>
`

// apache2Foreground is Debian's Apache with mod_php in the prefork MPM,
// logging to stderr, serving port 80 until SIGWINCH, its graceful stop.
func apache2Foreground(ctx context.Context, p *shell.Process, _ []string, _ io.Writer) (int, error) {
	for range 2 {
		fmt.Fprintf(p.Stderr, "AH00558: apache2: Could not reliably determine the server's fully qualified domain name, using %s. Set the 'ServerName' directive globally to suppress this message\n", podIP(p))
	}
	log := func(module, msg string) {
		fmt.Fprintf(p.Stderr, "[%s] [%s] [pid 1] %s\n", p.Clock.Now().UTC().Format("Mon Jan 02 15:04:05.000000 2006"), module, msg)
	}
	log("mpm_prefork:notice", "AH00163: Apache/2.4.25 (Debian) PHP/5.6.40 configured -- resuming normal operations")
	log("core:notice", "AH00094: Command line: 'apache2 -D FOREGROUND'")
	if err := lib.ListenUntilStopped(ctx, p, 80); err != nil {
		return 137, err
	}
	log("mpm_prefork:notice", "AH00170: caught SIGWINCH, shutting down gracefully")
	return 0, nil
}

// podIP is the pod's IP as the container's /etc/hosts names its
// hostname, as Apache finds its own name.
func podIP(p *shell.Process) string {
	ip := "127.0.1.1"
	if data, err := p.FS.ReadFile("/etc/hosts"); err == nil && p.Hostname != "" {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 1 && slices.Contains(f[1:], p.Hostname) {
				ip = f[0]
			}
		}
	}
	return ip
}

// hpaExampleServe answers / and /index.php with "OK!" once the loop is
// done, anything else with Apache's 404, and logs each request in the
// combined format to stdout.
func hpaExampleServe(c Running, _ int32, conn net.Conn) {
	p := c.Process
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && r.URL.Path != "/index.php" {
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL %s was not found on this server.</p>\n<hr>\n<address>Apache/2.4.25 (Debian) Server at %s Port 80</address>\n</body></html>\n", r.URL.Path, r.Host)
			return
		}
		if err := p.Compute(r.Context(), hpaExampleCPU); err != nil {
			return
		}
		w.Header().Set("X-Powered-By", "PHP/5.6.40")
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		io.WriteString(w, "OK!")
	})
	line := func(r *http.Request, status int, bytes int64) string {
		return fmt.Sprintf("%s - %s [%s] %q %d %d %q %q", clientIP(r), orDash(remoteUser(r)),
			p.Clock.Now().UTC().Format(timeLocal), requestLine(r), status, bytes, orDash(r.Referer()), orDash(r.UserAgent()))
	}
	lib.ServeHTTP(conn, lib.Logged(p, "Apache/2.4.25 (Debian)", page, line))
}
