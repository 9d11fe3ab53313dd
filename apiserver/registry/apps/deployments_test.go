package apps_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/store"
)

func TestDeploymentStrategyValidation(t *testing.T) {
	s := testserver.StartServer(t)
	const deploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"%s"},"spec":{%s"selector":{"matchLabels":{"app":"w"}},
		"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	tests := []struct {
		name, spec, field, message string // field "" = accepted
	}{
		{"Recreate alone is accepted", `"strategy":{"type":"Recreate"},`, "", ""},
		{"the default RollingUpdate is accepted", ``, "", ""},
		{"Recreate with a rollingUpdate block is forbidden", `"strategy":{"type":"Recreate","rollingUpdate":{"maxSurge":1}},`,
			"spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"},
		{"maxSurge and maxUnavailable both 0 would never make progress", `"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":"0%"}},`,
			"spec.strategy.rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0"},
		{"a maxUnavailable above 100% is invalid", `"strategy":{"rollingUpdate":{"maxUnavailable":"150%"}},`,
			"spec.strategy.rollingUpdate.maxUnavailable", "must not be greater than 100%"},
		{"a maxSurge above 100% is fine: twice the pods during the rollout", `"strategy":{"rollingUpdate":{"maxSurge":"150%"}},`, "", ""},
		{"a negative revisionHistoryLimit is invalid", `"revisionHistoryLimit":-1,`,
			"spec.revisionHistoryLimit", "must be greater than or equal to 0"},
		{"a negative number is invalid", `"strategy":{"rollingUpdate":{"maxUnavailable":-1}},`,
			"spec.strategy.rollingUpdate.maxUnavailable", "must be greater than or equal to 0"},
		{"a string that is not a percentage is invalid", `"strategy":{"rollingUpdate":{"maxSurge":"lots"}},`,
			"spec.strategy.rollingUpdate.maxSurge", "a valid percent string must be a numeric string followed by an ending '%'"},
		{"an unknown strategy type is not supported", `"strategy":{"type":"BlueGreen"},`,
			"spec.strategy.type", `Unsupported value: "BlueGreen"`},
		{"a progress deadline not above minReadySeconds is invalid", `"minReadySeconds":10,"progressDeadlineSeconds":10,`,
			"spec.progressDeadlineSeconds", "must be greater than minReadySeconds"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st struct { // a Status, or the created Deployment
				Message string
				Details *metav1.StatusDetails
			}
			code := s.Do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", fmt.Sprintf(deploy, fmt.Sprintf("d%d", i), tt.spec), &st)
			if tt.field == "" {
				if code != http.StatusCreated {
					t.Fatalf("status %d: %s", code, st.Message)
				}
				return
			}
			if code != http.StatusUnprocessableEntity || st.Details == nil || len(st.Details.Causes) != 1 {
				t.Fatalf("status %d, %+v: want 422 with one cause", code, st)
			}
			if c := st.Details.Causes[0]; c.Field != tt.field || !strings.Contains(c.Message, tt.message) {
				t.Errorf("cause %s: %q, want %s: %q", c.Field, c.Message, tt.field, tt.message)
			}
		})
	}
}

// A Deployment stored before a validation rule existed (here written to
// etcd directly) must still take status updates: they do not validate the
// spec again, or its controller could never report progress.
func TestStatusUpdatesDoNotRevalidateTheStoredSpec(t *testing.T) {
	s := testserver.StartServer(t)
	stored := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"legacy","namespace":"default","uid":"u1","creationTimestamp":"2026-01-01T00:00:00Z"},
		"spec":{"replicas":1,"revisionHistoryLimit":-1,"selector":{"matchLabels":{"app":"w"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
		"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	if _, err := s.Store.Create(context.Background(), store.Key("deployments", "default", "legacy"), []byte(stored)); err != nil {
		t.Fatal(err)
	}
	var out struct{ Message string }
	code := s.Do("PATCH", "/apis/apps/v1/namespaces/default/deployments/legacy/status", "application/merge-patch+json", `{"status":{"observedGeneration":1}}`, &out)
	if code != http.StatusOK {
		t.Fatalf("status update of a Deployment stored before validation: %d %s", code, out.Message)
	}
	if code := s.Do("PATCH", "/apis/apps/v1/namespaces/default/deployments/legacy", "application/merge-patch+json", `{"spec":{"replicas":2}}`, &out); code != http.StatusUnprocessableEntity {
		t.Errorf("a spec update still has to pass validation: got %d", code)
	}
}
