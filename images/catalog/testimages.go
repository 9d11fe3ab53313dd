package catalog

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/mkube/mkube/images/sampleapiserver"
	"github.com/mkube/mkube/images/shell"
)

// nonewprivsImage is registry.k8s.io/e2e-test-images/nonewprivs, with
// which Kubernetes tests allowPrivilegeEscalation: Alpine and a setuid
// root binary, /usr/local/bin/nnp (CMD ["nnp"]), that prints its
// effective uid. Run by a user other than root it is root by the setuid
// bit, unless the container has no_new_privs (allowPrivilegeEscalation:
// false), which the kernel honours by ignoring the bit:
//
//	runAsUser 1000                                  → Effective uid: 0
//	runAsUser 1000, allowPrivilegeEscalation false  → Effective uid: 1000
func nonewprivsImage() Image {
	img := alpineImage()
	img.Cmd = []string{"nnp"}
	img.Programs = map[string]shell.Program{"nnp": nnp}
	return img
}

func nnp(_ context.Context, p *shell.Process, _ []string, out io.Writer) (int, error) {
	euid := uint32(0) // the file's owner, by its setuid bit
	if p.NoNewPrivs {
		euid = p.Identity.UID
	}
	fmt.Fprintf(out, "Effective uid: %d\n", euid)
	return 0, nil
}

// updateDemoImage is registry.k8s.io/e2e-test-images/kitten or
// nautilus, the two images of kubectl's "update demo": agnhost with a
// picture of the animal and a JSON file naming it at its root, served by
// CMD ["test-webserver"] on port 80. Kubernetes' kubectl tests read
// data.json through pods/proxy to see which image a pod runs; its
// ImageVolume test mounts kitten as a volume and reads data.json and
// etc/os-release from it.
func updateDemoImage(animal string) func() Image {
	return func() Image {
		img := agnhostImage()
		img.Cmd = []string{"test-webserver"}
		img.Files["/"+animal+".jpg"] = "\xff\xd8\xff\xe0 JFIF (a " + animal + ")"
		img.Files["/data.json"] = "{\n  \"image\": \"" + animal + ".jpg\"\n}\n"
		return img
	}
}

// sampleAPIServerImage is registry.k8s.io/e2e-test-images/sample-apiserver,
// Kubernetes' build of k8s.io/sample-apiserver for its Aggregator
// conformance spec: the one binary /sample-apiserver on Alpine
// (test/images/sample-apiserver: ENTRYPOINT ["/sample-apiserver"], which
// empties the base image's CMD; no EXPOSE). The binary and what it
// serves are package sampleapiserver.
func sampleAPIServerImage() Image {
	img := alpineImage()
	img.Entrypoint, img.Cmd = []string{"/sample-apiserver"}, nil
	img.Programs = map[string]shell.Program{"sample-apiserver": sampleapiserver.Main}
	img.Serve = func(c Running, _ int32, conn net.Conn) { sampleapiserver.Serve(c.Process, conn) }
	return img
}
