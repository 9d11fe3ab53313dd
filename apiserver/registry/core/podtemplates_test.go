package core_test

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const templatesPath = "/api/v1/namespaces/default/podtemplates"

func TestAPodTemplateIsDefaultedCountsTemplateChangesAndPrintsAsKubeAPIServer(t *testing.T) {
	s := testserver.StartServer(t)
	var pt corev1.PodTemplate
	body := `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"web"},
		"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}`
	if code := s.Do(http.MethodPost, templatesPath, "application/json", body, &pt); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if pt.Generation != 1 || pt.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways ||
		pt.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Fatalf("generation %d, restartPolicy %q, pull policy %q: want 1 and the pod defaults",
			pt.Generation, pt.Template.Spec.RestartPolicy, pt.Template.Spec.Containers[0].ImagePullPolicy)
	}

	// Labels on the PodTemplate itself are not the template: same generation.
	if code := s.Do(http.MethodPatch, templatesPath+"/web", "application/merge-patch+json", `{"metadata":{"labels":{"tier":"front"}}}`, &pt); code != http.StatusOK || pt.Generation != 1 {
		t.Fatalf("label patch: %d, generation %d, want 200 and 1", code, pt.Generation)
	}
	// A new image is a new template: the next generation.
	if code := s.Do(http.MethodPatch, templatesPath+"/web", "application/strategic-merge-patch+json",
		`{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}`, &pt); code != http.StatusOK || pt.Generation != 2 {
		t.Fatalf("image patch: %d, generation %d, want 200 and 2", code, pt.Generation)
	}

	table := tableOf(t, s, templatesPath)
	if got, want := headers(table), "Name,Containers,Images,Pod Labels"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	if cells := table.Rows[0].Cells; cells[0] != "web" || cells[1] != "nginx" || cells[2] != "nginx:1.28" || cells[3] != "app=web" {
		t.Fatalf("row: %v", cells)
	}

	tests := []struct{ name, body, field, message string }{
		{"a template needs a container",
			`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"x"},"template":{"spec":{}}}`,
			"template.spec.containers", "Required value"},
		{"a template is a pod's, not a running pod's: no ephemeral containers",
			`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"x"},"template":{"spec":{"containers":[{"name":"a","image":"busybox"}],
				"ephemeralContainers":[{"name":"debug","image":"busybox"}]}}}`,
			"template.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"},
		{"template labels are labels",
			`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"x"},"template":{"metadata":{"labels":{"a b":"c"}},
				"spec":{"containers":[{"name":"a","image":"busybox"}]}}}`,
			"template.labels", "name part must consist of alphanumeric characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(http.MethodPost, templatesPath, "application/json", tc.body, &st); code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s, want 422", code, st.Message)
			}
			if len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field || !strings.Contains(st.Message, tc.message) {
				t.Fatalf("got %q (causes %+v), want %s: %s", st.Message, st.Details.Causes, tc.field, tc.message)
			}
		})
	}
}
