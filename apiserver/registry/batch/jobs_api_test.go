package batch_test

import (
	"net/http"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// What the API server does with Jobs, seen over HTTP as kubectl and the
// job controller see it.
func TestJobsOverTheAPI(t *testing.T) {
	s := testserver.StartServer(t)
	const path = "/apis/batch/v1/namespaces/default/jobs"
	// As `kubectl create job pi --image=busybox -- sh -c 'exit 0'` sends it.
	const pi = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"pi"},"spec":{"template":{"spec":{
		"restartPolicy":"OnFailure","containers":[{"name":"pi","image":"busybox","command":["sh","-c","exit 0"]}]}}}}`

	var job batchv1.Job
	if code := s.Do("POST", path, "application/json", pi, &job); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if job.Spec.Selector == nil || job.Spec.Selector.MatchLabels["batch.kubernetes.io/controller-uid"] != string(job.UID) ||
		job.Spec.Template.Labels["job-name"] != "pi" || *job.Spec.BackoffLimit != 6 || job.Generation != 1 {
		t.Errorf("created Job: selector %v, template labels %v, backoffLimit %d, generation %d",
			job.Spec.Selector, job.Spec.Template.Labels, *job.Spec.BackoffLimit, job.Generation)
	}

	// A restartPolicy of Always is refused in Kubernetes' words.
	var st metav1.Status
	always := strings.Replace(strings.Replace(pi, "OnFailure", "Always", 1), `"pi"}`, `"always"}`, 1)
	if code := s.Do("POST", path, "application/json", always, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, `spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`) {
		t.Errorf("restartPolicy Always: %d %q", code, st.Message)
	}

	// The template of a running Job is fixed.
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"pi","image":"nginx"}]}}}}`
	if code := s.Do("PATCH", path+"/pi", "application/strategic-merge-patch+json", patch, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, "spec.template: Invalid value") || !strings.Contains(st.Message, "field is immutable") {
		t.Errorf("template change: %d %q", code, st.Message)
	}

	// The status subresource takes the status and metadata, not the spec
	// (the conformance test patches an annotation through it).
	status := `{"metadata":{"annotations":{"patchedstatus":"true"}},"spec":{"parallelism":5},"status":{"active":1,"ready":1}}`
	job = batchv1.Job{}
	if code := s.Do("PATCH", path+"/pi/status", "application/merge-patch+json", status, &job); code != http.StatusOK {
		t.Fatalf("status patch: %d", code)
	}
	if job.Annotations["patchedstatus"] != "true" || *job.Spec.Parallelism != 1 || job.Status.Active != 1 {
		t.Errorf("after the status patch: annotations %v, parallelism %d, active %d", job.Annotations, *job.Spec.Parallelism, job.Status.Active)
	}
	// A status that says more pods are ready than active is refused.
	if code := s.Do("PATCH", path+"/pi/status", "application/merge-patch+json", `{"status":{"ready":2}}`, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, "status.ready: Invalid value: 2: cannot set more ready pods than active") {
		t.Errorf("ready > active: %d %q", code, st.Message)
	}

	// kubectl get jobs: Kubernetes' columns.
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("table: %d", code)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "Name,Status,Completions,Duration,Age,Containers,Images,Selector" {
		t.Errorf("columns %s", got)
	}
	if cells := table.Rows[0].Cells; cells[0] != "pi" || cells[1] != "Running" || cells[2] != "0/1" {
		t.Errorf("row %v", cells)
	}
	// The field selector Kubernetes gives Jobs.
	var list batchv1.JobList
	if code := s.Do("GET", path+"?fieldSelector=status.successful=0", "", "", &list); code != http.StatusOK || len(list.Items) != 1 {
		t.Errorf("fieldSelector status.successful=0: %d, %d jobs", code, len(list.Items))
	}
}
