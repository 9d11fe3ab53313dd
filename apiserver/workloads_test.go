package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeploymentStrategyValidation(t *testing.T) {
	s := newTestServer(t)
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
		{"a percentage above 100% is invalid", `"strategy":{"rollingUpdate":{"maxSurge":"150%"}},`,
			"spec.strategy.rollingUpdate.maxSurge", "must not be greater than 100%"},
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
			code := s.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", fmt.Sprintf(deploy, fmt.Sprintf("d%d", i), tt.spec), &st)
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
