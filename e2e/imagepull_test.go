package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestImagePullBackOff: an image that cannot be pulled (a tag that does
// not exist, a registry that does not resolve) is ErrImagePull, then
// ImagePullBackOff while the kubelet waits to try again, with the events
// `kubectl describe` shows on a real cluster; fixing the image runs it.
func TestImagePullBackOff(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01",
		flags: []string{"--crash-loop-backoff-initial", "1s", "--crash-loop-backoff-max", "4s"}})
	k := newKubectl(t, c)
	k.mustKubectl(t, "run", "missing-tag", "--image=nginx:doesnotexist")
	k.mustKubectl(t, "run", "no-registry", "--image=registry.example.invalid/app:1.0")

	for name, why := range map[string]string{
		"missing-tag": `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:doesnotexist": failed to resolve reference "docker.io/library/nginx:doesnotexist": docker.io/library/nginx:doesnotexist: not found`,
		"no-registry": `lookup registry.example.invalid: no such host`,
	} {
		seen := map[string]bool{}
		testserver.EventuallyWithin(t, 30*time.Second, name+" shows ErrImagePull, then ImagePullBackOff", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", name, "--no-headers")
			if f := strings.Fields(out); len(f) > 2 {
				seen[f[2]] = true
			}
			return seen["ImagePullBackOff"], out
		})
		describe := k.mustKubectl(t, "describe", "pod", name)
		for _, want := range []string{"Failed to pull image", why, "Error: ErrImagePull", "Back-off pulling image", "Error: ImagePullBackOff"} {
			if !strings.Contains(describe, want) {
				t.Errorf("kubectl describe pod %s lacks %q:\n%s", name, want, describe)
			}
		}
		if phase := k.mustKubectl(t, "get", "pod", name, "-o", "jsonpath={.status.phase}"); phase != "Pending" {
			t.Errorf("%s is %s, want Pending", name, phase)
		}
	}
	k.mustKubectl(t, "set", "image", "pod/missing-tag", "missing-tag=nginx:1.25")
	testserver.EventuallyWithin(t, 30*time.Second, "missing-tag runs once its image is fixed", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "missing-tag", "--no-headers")
		return strings.Contains(out, " Running "), out
	})
}
