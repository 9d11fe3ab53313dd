package apps_test

import (
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const webSet = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{"serviceName":"nginx","replicas":3,
	"selector":{"matchLabels":{"app":"nginx"}},
	"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}}}}`

// status is a Status or an object: what the tests read of an answer.
type status struct {
	Message string
	Details *metav1.StatusDetails
}

// invalidOn checks a 422 whose one cause is on field.
func invalidOn(t *testing.T, code int, st status, field, detail string) {
	t.Helper()
	if code != http.StatusUnprocessableEntity || st.Details == nil || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Field != field || !strings.Contains(st.Details.Causes[0].Message, detail) {
		t.Errorf("got %d %+v, want 422 with one cause on %s saying %q", code, st, field, detail)
	}
}

func TestStatefulSetsThroughTheAPI(t *testing.T) {
	s := testserver.StartServer(t)
	const path = "/apis/apps/v1/namespaces/default/statefulsets"
	var created appsv1.StatefulSet
	if code := s.Do("POST", path, "application/json", webSet, &created); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if created.Generation != 1 || created.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement ||
		*created.Spec.UpdateStrategy.RollingUpdate.Partition != 0 {
		t.Errorf("created generation %d, spec %+v: want generation 1 and the defaults", created.Generation, created.Spec)
	}

	// kubectl scale sts web --replicas=5 goes through the scale subresource.
	var scale autoscalingv1.Scale
	if code := s.Do("PATCH", path+"/web/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, &scale); code != http.StatusOK {
		t.Fatalf("scale: %d", code)
	}
	if scale.Spec.Replicas != 5 || scale.Status.Selector != "app=nginx" {
		t.Errorf("scale %+v, want 5 replicas selected by app=nginx", scale)
	}
	var got appsv1.StatefulSet
	s.Do("GET", path+"/web", "", "", &got)
	if *got.Spec.Replicas != 5 || got.Generation != 2 {
		t.Errorf("after scaling: replicas %d, generation %d; want 5 and 2", *got.Spec.Replicas, got.Generation)
	}

	// The identity of the pods may not change.
	var st status
	code := s.Do("PATCH", path+"/web", "application/merge-patch+json", `{"spec":{"serviceName":"web"}}`, &st)
	invalidOn(t, code, st, "spec.serviceName", "field is immutable")

	// The status subresource validates the counts, and keeps the spec.
	code = s.Do("PATCH", path+"/web/status", "application/merge-patch+json", `{"status":{"replicas":1,"readyReplicas":2}}`, &st)
	invalidOn(t, code, st, "status.readyReplicas", "cannot be greater than status.replicas")
	code = s.Do("PATCH", path+"/web/status", "application/merge-patch+json",
		`{"spec":{"replicas":9},"status":{"replicas":2,"readyReplicas":2,"conditions":[{"type":"StatusPatched","status":"True"}]}}`, &got)
	if code != http.StatusOK || got.Status.ReadyReplicas != 2 || *got.Spec.Replicas != 5 || got.Generation != 2 {
		t.Errorf("status patch: %d, status %+v, replicas %d, generation %d; want the status only", code, got.Status, *got.Spec.Replicas, got.Generation)
	}

	// kubectl get sts: NAME READY AGE, -o wide adds CONTAINERS and IMAGES.
	var table metav1.Table
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	s.DoRequest(req, &table)
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if strings.Join(cols, " ") != "Name Ready Age Containers Images" || len(table.Rows) != 1 || table.Rows[0].Cells[1] != "2/5" {
		t.Errorf("table columns %v, rows %v; want Name Ready Age Containers Images and READY 2/5", cols, table.Rows)
	}
}
