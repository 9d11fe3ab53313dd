package catalog

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// website is a static web server as nginx's and Apache httpd's default
// configurations make them: the files under a document root, a
// directory's index file, and the server's own page for what it cannot
// serve. Each request reads the container's filesystem afresh, so a file
// that `kubectl exec` wrote, or a ConfigMap mounted over the root, is
// what the next request gets.
type website struct {
	server    string                    // the Server header
	root      func(fs *shell.FS) string // the document root, read per request
	index     []string                  // a directory's index files, in order
	errorPage func(code int, r *http.Request) (contentType, body string)
	// accessLog is the line the server logs for each request.
	accessLog func(r *http.Request, status int, bytes int64, now string) string
}

func (site website) serve(c Running, _ int32, conn net.Conn) {
	line := func(r *http.Request, status int, bytes int64) string {
		return site.accessLog(r, status, bytes, c.Process.Clock.Now().UTC().Format(timeLocal))
	}
	lib.ServeHTTP(conn, lib.Logged(c.Process, site.server, withCPU(c.Process, staticFileCPU, site.handler(c.Process.FS)), line))
}

// handler answers GET and HEAD with files: a directory asked for
// without its trailing slash is redirected to it (301), a directory
// without an index file is Forbidden (403: directory listing is off), a
// missing file is Not Found (404), and any other method is refused (405).
func (site website) handler(fs *shell.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			site.fail(w, r, http.StatusMethodNotAllowed)
			return
		}
		root := site.root(fs)
		name := path.Clean("/" + r.URL.Path)
		exists, isDir := fs.Stat(path.Join(root, name))
		switch {
		case !exists:
			site.fail(w, r, http.StatusNotFound)
			return
		case isDir && !strings.HasSuffix(r.URL.Path, "/"):
			w.Header().Set("Location", "http://"+r.Host+name+"/")
			site.fail(w, r, http.StatusMovedPermanently)
			return
		case isDir:
			index := ""
			for _, f := range site.index {
				if ok, dir := fs.Stat(path.Join(root, name, f)); ok && !dir {
					index = path.Join(name, f)
					break
				}
			}
			if index == "" {
				site.fail(w, r, http.StatusForbidden)
				return
			}
			name = index
		}
		data, err := fs.ReadFile(path.Join(root, name))
		if err != nil {
			site.fail(w, r, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", mimeType(name))
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Write(data)
	})
}

// fail answers code with the server's own page for it.
func (site website) fail(w http.ResponseWriter, r *http.Request, code int) {
	contentType, body := site.errorPage(code, r)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		io.WriteString(w, body)
	}
}

// mimeTypes are nginx's mime.types for what a web page is made of; the
// rest is its default_type.
var mimeTypes = map[string]string{
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".xml": "text/xml",
	".js": "application/javascript", ".json": "application/json", ".txt": "text/plain",
	".gif": "image/gif", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png",
	".svg": "image/svg+xml", ".ico": "image/x-icon", ".webp": "image/webp",
}

func mimeType(name string) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}

// nginxSite is the nginx image's default server: /usr/share/nginx/html,
// or the root its configuration names. nginx's error pages end their
// lines with CRLF and name its version; its access log is the image's
// "main" format (nginx.conf), the combined format plus
// $http_x_forwarded_for, to /var/log/nginx/access.log, which the image
// links to /dev/stdout.
var nginxSite = website{
	server: "nginx/" + nginxVersion,
	root:   nginxRoot,
	index:  []string{"index.html", "index.htm"},
	errorPage: func(code int, _ *http.Request) (string, string) {
		title := fmt.Sprintf("%d %s", code, http.StatusText(code))
		if code == http.StatusMethodNotAllowed {
			title = "405 Not Allowed" // nginx's own wording
		}
		return "text/html", "<html>\r\n<head><title>" + title + "</title></head>\r\n<body>\r\n" +
			"<center><h1>" + title + "</h1></center>\r\n<hr><center>nginx/" + nginxVersion + "</center>\r\n</body>\r\n</html>\r\n"
	},
	accessLog: func(r *http.Request, status int, bytes int64, now string) string {
		return fmt.Sprintf("%s - %s [%s] %q %d %d %q %q %q", clientIP(r), orDash(remoteUser(r)), now, requestLine(r),
			status, bytes, orDash(r.Referer()), orDash(r.UserAgent()), orDash(r.Header.Get("X-Forwarded-For")))
	},
}

// rootDirective is nginx's `root /path;`.
var rootDirective = regexp.MustCompile(`(?m)^\s*root\s+([^;\s]+)\s*;`)

// nginxRoot is the document root the configuration names (the first root
// directive in conf.d, then nginx.conf), as nginxPorts reads its ports,
// so a ConfigMap mounted over default.conf moves it as it would the real
// server's.
func nginxRoot(fs *shell.FS) string {
	names, _ := fs.List("/etc/nginx/conf.d")
	var files []string
	for _, n := range names {
		if strings.HasSuffix(n, ".conf") {
			files = append(files, path.Join("/etc/nginx/conf.d", n))
		}
	}
	for _, f := range append(files, "/etc/nginx/nginx.conf") {
		data, _ := fs.ReadFile(f)
		if m := rootDirective.FindSubmatch(data); m != nil {
			return path.Join("/", string(m[1]))
		}
	}
	return "/usr/share/nginx/html"
}

// httpdSite is the httpd image's default server: htdocs under the
// ServerRoot, Apache's error pages, and the "common" log format the
// image's httpd.conf sends to /proc/self/fd/1 (stdout).
var httpdSite = website{
	server: "Apache/2.4.62 (Unix)",
	root:   func(*shell.FS) string { return "/usr/local/apache2/htdocs" },
	index:  []string{"index.html"},
	errorPage: func(code int, r *http.Request) (string, string) {
		var p string
		switch code {
		case http.StatusMovedPermanently:
			p = fmt.Sprintf(`The document has moved <a href="http://%s%s/">here</a>.`, r.Host, path.Clean("/"+r.URL.Path))
		case http.StatusForbidden:
			p = "You don't have permission to access this resource."
		case http.StatusNotFound:
			p = "The requested URL was not found on this server."
		case http.StatusMethodNotAllowed:
			p = "The requested method " + r.Method + " is not allowed for this URL."
		}
		return "text/html; charset=iso-8859-1", "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n" +
			fmt.Sprintf("<title>%d %s</title>\n</head><body>\n<h1>%s</h1>\n<p>%s</p>\n</body></html>\n",
				code, http.StatusText(code), http.StatusText(code), p)
	},
	accessLog: func(r *http.Request, status int, bytes int64, now string) string {
		b := "-" // %b: the body's size, "-" for none
		if bytes > 0 {
			b = strconv.FormatInt(bytes, 10)
		}
		return fmt.Sprintf("%s - %s [%s] %q %d %s", clientIP(r), orDash(remoteUser(r)), now, requestLine(r), status, b)
	},
}

// remoteUser is the Basic auth user, which access logs show.
func remoteUser(r *http.Request) string {
	user, _, _ := r.BasicAuth()
	return user
}
