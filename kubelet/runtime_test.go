package kubelet

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/mkube/mkube/cri"
)

// testRuntime starts an in-process runtime, as a kubelet without
// --container-runtime-endpoint does, and connects to it over gRPC.
func testRuntime(t *testing.T) *runtimeService {
	t.Helper()
	rs, err := connectRuntime(context.Background(), "", cri.Options{PodCIDR: netip.MustParsePrefix("10.244.1.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.close)
	return rs
}

func TestTheKubeletLearnsItsRuntimeFromVersion(t *testing.T) {
	rs := testRuntime(t)
	if rs.name != "mkube" || rs.version != "mkube://v0.1.0" || rs.containerID("4f1c") != "mkube://4f1c" {
		t.Errorf("runtime name %q version %q containerID %q", rs.name, rs.version, rs.containerID("4f1c"))
	}
}

func TestAKubeletWhoseRuntimeDoesNotAnswerFailsSayingWhy(t *testing.T) {
	endpoint := "unix://" + t.TempDir() + "/nobody.sock"
	_, err := connectRuntime(context.Background(), endpoint, cri.Options{})
	if err == nil || !strings.Contains(err.Error(), "container runtime "+endpoint+" is not answering") {
		t.Errorf("connectRuntime to a socket nobody serves: %v", err)
	}
}
