package batch_test

import (
	"fmt"
	"net/http"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// What the API server does with CronJobs, seen over HTTP as kubectl sees it.
func TestCronJobsOverTheAPI(t *testing.T) {
	s := testserver.StartServer(t)
	const path = "/apis/batch/v1/namespaces/default/cronjobs"
	const hello = `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"hello"},"spec":{"schedule":%q,
		"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"hello","image":"busybox"}]}}}}}}`

	var st metav1.Status
	if code := s.Do("POST", path, "application/json", fmt.Sprintf(hello, "61 * * * *"), &st); code != http.StatusUnprocessableEntity {
		t.Fatalf("a bad schedule: status %d, want 422", code)
	}
	if want := `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`; st.Message != want {
		t.Errorf("a bad schedule's message:\n%s\nwant\n%s", st.Message, want)
	}

	var cj batchv1.CronJob
	if code := s.Do("POST", path, "application/json", fmt.Sprintf(hello, "*/1 * * * *"), &cj); code != http.StatusCreated {
		t.Fatalf("create: status %d", code)
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.SuccessfulJobsHistoryLimit != 3 || cj.Generation != 1 {
		t.Errorf("created CronJob not defaulted: %+v", cj.Spec)
	}

	// The status subresource writes the status and metadata, never the
	// spec: what the controller uses to record lastScheduleTime.
	status := `{"metadata":{"annotations":{"patchedstatus":"true"}},"spec":{"schedule":"@daily"},"status":{"lastScheduleTime":"2024-05-01T10:00:00Z"}}`
	if code := s.Do("PATCH", path+"/hello/status", "application/merge-patch+json", status, &cj); code != http.StatusOK {
		t.Fatalf("patch status: status %d", code)
	}
	if cj.Status.LastScheduleTime == nil || cj.Annotations["patchedstatus"] != "true" || cj.Spec.Schedule != "*/1 * * * *" {
		t.Errorf("after a status patch: annotations %v, schedule %q, lastScheduleTime %v; want the annotation and the time, the schedule unchanged",
			cj.Annotations, cj.Spec.Schedule, cj.Status.LastScheduleTime)
	}
	// And the main resource never writes the status.
	if code := s.Do("PATCH", path+"/hello", "application/merge-patch+json", `{"status":{"lastScheduleTime":null},"spec":{"suspend":true}}`, &cj); code != http.StatusOK {
		t.Fatalf("patch: status %d", code)
	}
	if cj.Status.LastScheduleTime == nil || !*cj.Spec.Suspend || cj.Generation != 2 {
		t.Errorf("after a spec patch: suspend %v, generation %d, lastScheduleTime %v; want true, 2, kept", *cj.Spec.Suspend, cj.Generation, cj.Status.LastScheduleTime)
	}

	// kubectl get cronjobs asks for a Table.
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("table: status %d", code)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		}
	}
	if got, want := fmt.Sprintf("%v", names), "[Name Schedule Timezone Suspend Active Last Schedule Age]"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	if len(table.Rows) != 1 || table.Rows[0].Cells[3] != "True" {
		t.Errorf("rows %v, want hello, suspended", table.Rows)
	}
}
