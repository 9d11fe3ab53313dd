package nodestatus

import (
	"testing"

	"github.com/mkube/mkube/network/podnetwork"
)

// A restarted runtime may have a new peer address: the Node takes the
// runtime's, and loses one the runtime no longer has.
func TestMergeNodeTakesTheRuntimesPeerAddress(t *testing.T) {
	want := newNode(testConfig(), runtimeInfo{}, t0)
	podnetwork.SetPeerAnnotation(want, "127.0.0.1:40611")
	existing := want.DeepCopy()
	podnetwork.SetPeerAnnotation(existing, "127.0.0.1:39193")
	existing.Annotations["team"] = "blue"
	got := mergeNode(existing, want)
	if got.Annotations[podnetwork.AnnotationPeer] != "127.0.0.1:40611" || got.Annotations["team"] != "blue" {
		t.Errorf("merged annotations %v, want the new peer and the user's annotation", got.Annotations)
	}
	podnetwork.SetPeerAnnotation(want, "")
	if got := mergeNode(existing, want); got.Annotations[podnetwork.AnnotationPeer] != "" {
		t.Errorf("a runtime without a peer address left %q on the Node", got.Annotations[podnetwork.AnnotationPeer])
	}
}

// The kubelet's own annotations (a fleet node's
// metrics.k8s.io/resource-metrics-path) are set again on a Node a
// restarted kubelet finds, beside the user's.
func TestMergeNodeSetsTheKubeletsAnnotations(t *testing.T) {
	want := newNode(testConfig(), runtimeInfo{}, t0)
	want.Annotations = map[string]string{"metrics.k8s.io/resource-metrics-path": "/nodes/fake-2/metrics/resource"}
	existing := want.DeepCopy()
	existing.Annotations = map[string]string{"team": "blue", "metrics.k8s.io/resource-metrics-path": "/old"}
	got := mergeNode(existing, want)
	if got.Annotations["metrics.k8s.io/resource-metrics-path"] != "/nodes/fake-2/metrics/resource" || got.Annotations["team"] != "blue" {
		t.Errorf("merged annotations %v, want the kubelet's path and the user's annotation", got.Annotations)
	}
}
