package autoscaling_test

import (
	"encoding/json"
	"net/http"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const (
	v1Path = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	v2Path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
)

// One autoscaler, created as v1 (what `kubectl autoscale` of v1.32
// sends), read and changed through both versions.
func TestOneAutoscalerIsServedAsV1AndV2(t *testing.T) {
	s := testserver.StartServer(t)
	body := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
	"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":50}}`
	var created autoscalingv1.HorizontalPodAutoscaler
	// Both writes name their field manager, as kubectl's do: the managed
	// fields recorded through v1 are read again through v2.
	if code := s.Do(http.MethodPost, v1Path+"?fieldManager=kubectl-autoscale", "application/json", body, &created); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if created.Spec.MinReplicas == nil || *created.Spec.MinReplicas != 1 || created.Generation != 1 {
		t.Errorf("created: minReplicas %v, generation %d", created.Spec.MinReplicas, created.Generation)
	}

	var v2 autoscalingv2.HorizontalPodAutoscaler
	if code := s.Do(http.MethodGet, v2Path+"/web", "", "", &v2); code != http.StatusOK {
		t.Fatalf("get v2: %d", code)
	}
	if v2.APIVersion != "autoscaling/v2" || len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource == nil ||
		*v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 || v2.UID != created.UID {
		t.Fatalf("v2 view: %+v", v2)
	}

	// A v2 client adds a metric v1 cannot hold: v1 sees it in an annotation.
	patch := `{"spec":{"metrics":[{"type":"Pods","pods":{"metric":{"name":"queue"},"target":{"type":"AverageValue","averageValue":"10"}}},
	{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]}}`
	if code := s.Do(http.MethodPatch, v2Path+"/web?fieldManager=kubectl-patch", "application/merge-patch+json", patch, &v2); code != http.StatusOK {
		t.Fatalf("patch v2: %d", code)
	}
	var v1 autoscalingv1.HorizontalPodAutoscaler
	if code := s.Do(http.MethodGet, v1Path+"/web", "", "", &v1); code != http.StatusOK {
		t.Fatalf("get v1: %d", code)
	}
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 60 || v1.Generation != 2 ||
		v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"] != `[{"type":"Pods","pods":{"metricName":"queue","targetAverageValue":"10"}}]` {
		t.Errorf("v1 view: target %v, generation %d, annotations %v", p, v1.Generation, v1.Annotations)
	}

	// A v1 client writes its view back: the v2 metric survives.
	v1.Spec.MaxReplicas = 8
	var put autoscalingv1.HorizontalPodAutoscaler
	if code := s.Do(http.MethodPut, v1Path+"/web", "application/json", asJSON(t, &v1), &put); code != http.StatusOK {
		t.Fatalf("put v1: %d", code)
	}
	if code := s.Do(http.MethodGet, v2Path+"/web", "", "", &v2); code != http.StatusOK || v2.Spec.MaxReplicas != 8 || len(v2.Spec.Metrics) != 2 ||
		v2.Spec.Metrics[0].Pods == nil || len(v2.Annotations) != 0 {
		t.Errorf("after the v1 update: %d %+v, annotations %v", code, v2.Spec, v2.Annotations)
	}

	// kubectl get hpa, from either version.
	for _, path := range []string{v1Path, v2Path} {
		var table metav1.Table
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		if code := s.DoRequest(req, &table); code != http.StatusOK || len(table.Rows) != 1 {
			t.Fatalf("%s table: %d %+v", path, code, table)
		}
		cells := table.Rows[0].Cells
		if cells[1] != "Deployment/web" || cells[2] != "<unknown>/10, cpu: <unknown>/60%" || cells[3] != "1" || cells[4] != float64(8) || cells[5] != float64(0) {
			t.Errorf("%s row: %v", path, cells)
		}
	}
}

func TestAnInvalidV1AutoscalerGetsKubernetesErrors(t *testing.T) {
	s := testserver.StartServer(t)
	body := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
	"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":0,"targetCPUUtilizationPercentage":0}}`
	var st metav1.Status
	if code := s.Do(http.MethodPost, v1Path, "application/json", body, &st); code != http.StatusUnprocessableEntity {
		t.Fatalf("create: %d", code)
	}
	const want = `HorizontalPodAutoscaler.autoscaling "web" is invalid: [spec.maxReplicas: Required value: must be set and greater than 0, ` +
		"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`, " +
		`spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0]`
	if st.Message != want {
		t.Errorf("message:\n got %s\nwant %s", st.Message, want)
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
