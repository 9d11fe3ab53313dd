// The table of images: what each name holds, how big it is, whether a
// pull of it fails, and the stand-in for an image the table lacks.

package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// Image is what an image gives its containers.
type Image struct {
	Entrypoint []string // ENTRYPOINT
	Cmd        []string // CMD
	Env        []string // ENV, NAME=value
	WorkingDir string   // WORKDIR; "" is /
	Ports      []int32  // EXPOSE
	// StopSignal is the image's STOPSIGNAL ("" is SIGTERM). containerd
	// sends it, not SIGTERM, when the kubelet stops the container, so a
	// program treats p.Terminated() as this signal and logs what the real
	// server logs on it (nginx: "signal 3 (SIGQUIT) received").
	StopSignal string
	Files      map[string]string        // files in the image's filesystem, by absolute path
	Programs   map[string]shell.Program // the image's own programs, by base name ("nginx")
	// Serve answers one connection to a port the container's process
	// listens on (serve.go); nil for images that serve nothing.
	Serve Server
	// ServeDatagram answers one datagram to a UDP port the container's
	// process has bound (ListenUDP); nil for images that serve no UDP.
	ServeDatagram DatagramServer
	Known         bool // false: the catalog does not know the image
}

// images are the known images by repository path, as Docker Hub names
// them without "library/" ("nginx", "polinux/stress"). Each is a function
// so that every Lookup gets its own maps to change.
var images = map[string]func() Image{
	"nginx":          nginxImage,
	"httpd":          httpdImage,
	"redis":          redisImage,
	"mysql":          mysqlImage,
	"postgres":       postgresImage,
	"busybox":        busyboxImage,
	"alpine":         alpineImage,
	"ubuntu":         func() Image { return bashImage(ubuntuRelease) },
	"debian":         func() Image { return bashImage(debianRelease) },
	"pause":          pauseImage,
	"polinux/stress": stressImage,
	// Kubernetes' own test images, which its docs' probe examples run.
	"e2e-test-images/agnhost":    agnhostImage,
	"e2e-test-images/busybox":    busyboxImage, // the busybox of Kubernetes' Job tests, default command sh
	"e2e-test-images/nonewprivs": nonewprivsImage,
	// What Kubernetes' HPA walkthrough and tests scale (autoscaling.go, resourceconsumer.go).
	"hpa-example":                       hpaExampleImage,
	"e2e-test-images/resource-consumer": resourceConsumerImage,
	// The aggregated API server of Kubernetes' Aggregator spec (testimages.go, package sampleapiserver).
	"e2e-test-images/sample-apiserver": sampleAPIServerImage,
	// metrics-server, which runs mkube's own (metricsserver.go, package metricsserver).
	"metrics-server/metrics-server": metricsServerImage,
	// Kubernetes' own builds of the everyday images, which its tests run.
	"e2e-test-images/nginx":    nginxImage,
	"e2e-test-images/httpd":    httpdImage,
	"e2e-test-images/kitten":   updateDemoImage("kitten"), // kubectl's update demo, and an image volume's content in Kubernetes' tests
	"e2e-test-images/nautilus": updateDemoImage("nautilus"),
	"goproxy":                  goproxyImage,
	"etcd":                     etcdImage, // registry.k8s.io/etcd, of the docs' gRPC probe example
}

// sizes are the images' sizes as `crictl images` shows them on a real
// node (the compressed layers of the amd64 image, roughly), so that the
// node's status.images and the scheduler's ImageLocality see the real
// proportions: busybox is tiny, mysql is not.
var sizes = map[string]uint64{
	"nginx": 72 << 20, "httpd": 58 << 20, "redis": 45 << 20, "mysql": 170 << 20, "postgres": 155 << 20,
	"busybox": 2 << 20, "alpine": 4 << 20, "ubuntu": 29 << 20, "debian": 49 << 20,
	"pause": 320 << 10, "polinux/stress": 4 << 20, "e2e-test-images/agnhost": 51 << 20, "e2e-test-images/nonewprivs": 4 << 20,
	"e2e-test-images/busybox": 2 << 20, "e2e-test-images/nginx": 72 << 20, "e2e-test-images/httpd": 58 << 20, "e2e-test-images/kitten": 52 << 20, "e2e-test-images/nautilus": 52 << 20, "goproxy": 5 << 20,
	"etcd": 57 << 20, "e2e-test-images/sample-apiserver": 40 << 20, "metrics-server/metrics-server": 19 << 20,
	"hpa-example": 146 << 20, "e2e-test-images/resource-consumer": 12 << 20,
}

// Size is the size of the image ref, or 0 if the catalog does not know it.
func Size(ref string) uint64 {
	_, repo, _ := split(ref)
	return sizes[repo]
}

// Names lists the repository paths the catalog knows, sorted.
func Names() []string {
	names := make([]string, 0, len(images))
	for n := range images {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns what the image ref holds. ref is normalized as containerd
// names images ("docker.io/library/nginx:1.25", "registry.k8s.io/pause:3.10",
// "docker.io/library/nginx@sha256:..."), though short names ("nginx")
// work too. An unknown image is Known=false, with a stand-in program.
func Lookup(ref string) Image {
	_, repo, _ := split(ref)
	if build, ok := images[repo]; ok {
		img := build()
		img.Known = true
		return img
	}
	return unknownImage(ref)
}

// split cuts a reference into registry host, repository path (without
// docker.io's "library/") and tag or digest, by the rules of Docker's
// reference package: a first component with "." or ":" or "localhost" is
// a host.
func split(ref string) (host, repo, tagOrDigest string) {
	name, digest, hasDigest := strings.Cut(ref, "@")
	host, repo = "docker.io", name
	if h, rest, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(h, ".:") || h == "localhost") {
		host, repo = h, rest
	}
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo, tagOrDigest = repo[:i], repo[i+1:]
	}
	if hasDigest {
		tagOrDigest = digest
	}
	if tagOrDigest == "" {
		tagOrDigest = "latest"
	}
	// Docker Hub's official images are library/NAME. The host is dropped,
	// so k8s.gcr.io/pause (registry.k8s.io's old home) and mirrors match.
	return host, strings.TrimPrefix(repo, "library/"), tagOrDigest
}

// ErrNotFound is what a pull of a tag that does not exist wraps: the
// runtime reports it as gRPC NotFound, as containerd does.
var ErrNotFound = errors.New("not found")

// PullError says why pulling ref fails, or nil. It words the errors as
// containerd does, since the kubelet puts them, as they are, in the
// ErrImagePull event and the container's waiting message.
func PullError(ref string) error {
	host, repo, tag := split(ref)
	if h, _, _ := strings.Cut(host, ":"); strings.HasSuffix(h, ".invalid") || h == "invalid.registry.k8s.io" {
		// RFC 2606 reserves .invalid: it never resolves, so the resolver's
		// first request (a HEAD of the manifest) fails in DNS. Kubernetes'
		// own tests use invalid.registry.k8s.io, which does not resolve
		// either.
		return fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: "+
			"failed to do request: Head %q: dial tcp: lookup %s: no such host",
			ref, ref, "https://"+host+"/v2/"+repo+"/manifests/"+tag, h)
	}
	if tag == "doesnotexist" || tag == "nonexistent" || tag == "non-existent" || tag == "404" { // the last three, Kubernetes' tests
		return fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: %s: %w",
			ref, ref, ref, ErrNotFound)
	}
	return nil
}

// unknownImage stands in for an image the catalog does not know: its
// program says so, then behaves as a generic server, running until it is
// stopped, so that a Deployment of any image at least becomes Running.
// The caller, who knows the container's ports, decides what listens.
func unknownImage(ref string) Image {
	app := func(ctx context.Context, p *shell.Process, _ []string, out io.Writer) (int, error) {
		fmt.Fprintf(out, "mkube: image %q is not in mkube's catalog; running it as a generic server until it is stopped\n", ref)
		if err := lib.ListenUntilStopped(ctx, p); err != nil {
			return 137, err
		}
		return 0, nil
	}
	return Image{Cmd: []string{"mkube-app"}, Env: []string{"PATH=" + stdPath},
		Programs: map[string]shell.Program{"mkube-app": app}, Serve: genericServe(ref)}
}

// genericServe is what an unknown image answers on the ports it listens
// on (its pod's containerPorts): 200 on every path, so that an httpGet
// probe of any app passes, and a page that says what answered.
func genericServe(ref string) Server {
	return func(c Running, port int32, conn net.Conn) {
		lib.ServeHTTP(conn, lib.Logged(c.Process, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s answered %s %s on port %d: image %q is not in mkube's catalog, "+
				"so it runs as a generic server that answers 200 on every path.\n", c.Process.Hostname, r.Method, r.URL.Path, port, ref)
		}), nil))
	}
}
