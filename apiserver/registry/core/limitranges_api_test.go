package core_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// Through the API server: the LimitRange's defaults, its table, and the
// LimitRanger admission applying it to the next pods.
func TestALimitRangeDefaultsTheNextPodAndPrintsItsCreationTime(t *testing.T) {
	s := testserver.StartServer(t)
	const ranges = "/api/v1/namespaces/default/limitranges"
	var lr corev1.LimitRange
	body := `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"limits"},
		"spec":{"limits":[{"type":"Container","max":{"cpu":"500m"},"defaultRequest":{"cpu":"100m"}}]}}`
	if code := s.Do(http.MethodPost, ranges, "application/json", body, &lr); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if q := lr.Spec.Limits[0].Default[corev1.ResourceCPU]; q.String() != "500m" {
		t.Fatalf("default limit %s, want the max, 500m", q.String())
	}
	table := tableOf(t, s, ranges)
	if got, want := headers(table), "Name,Created At"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	if cells := table.Rows[0].Cells; cells[0] != "limits" || cells[1] != lr.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z") {
		t.Fatalf("row %v", cells)
	}

	var pod corev1.Pod
	podBody := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}`
	if code := s.Do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json", podBody, &pod); code != http.StatusCreated {
		t.Fatalf("create pod: %d", code)
	}
	res := pod.Spec.Containers[0].Resources
	if req, lim := res.Requests[corev1.ResourceCPU], res.Limits[corev1.ResourceCPU]; req.String() != "100m" || lim.String() != "500m" ||
		pod.Annotations["kubernetes.io/limit-ranger"] != "LimitRanger plugin set: cpu request for container nginx; cpu limit for container nginx" {
		t.Fatalf("pod resources %v, annotations %v", res, pod.Annotations)
	}
	if pod.Status.QOSClass != corev1.PodQOSBurstable { // of the defaulted resources, not of none
		t.Fatalf("QoS class %s, want Burstable", pod.Status.QOSClass)
	}

	var st metav1.Status
	big := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big"},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{"limits":{"cpu":"800m"}}}]}}`
	if code := s.Do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json", big, &st); code != http.StatusForbidden ||
		st.Message != `pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 800m` {
		t.Fatalf("got %d %q", code, st.Message)
	}
}
