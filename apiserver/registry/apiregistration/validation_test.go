package apiregistration

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
)

func validAPIService() *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "metrics.k8s.io", Version: "v1beta1",
			Service:              &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: ptr.To[int32](443)},
			GroupPriorityMinimum: 100, VersionPriority: 100, InsecureSkipTLSVerify: true},
	}
}

func TestValidateAPIService(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*apiregistrationv1.APIService)
		want   []string // the errors, in Kubernetes' words; none if empty
	}{
		{name: "an aggregated API server's APIService is valid", change: func(*apiregistrationv1.APIService) {}},
		{name: "the legacy core group is v1. with an empty group", change: func(s *apiregistrationv1.APIService) {
			s.Name, s.Spec.Group, s.Spec.Version, s.Spec.Service, s.Spec.InsecureSkipTLSVerify = "v1.", "", "v1", nil, false
		}},
		{name: "the name must be the version, a dot and the group", change: func(s *apiregistrationv1.APIService) { s.Name = "metrics" },
			want: []string{"metadata.name: Invalid value: \"metrics\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\""}},
		{name: "only v1 may have an empty group", change: func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Group = "v1beta1.", "" },
			want: []string{"spec.group: Required value: only v1 may have an empty group and it better be legacy kube"}},
		{name: "the group is a DNS subdomain", change: func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Group = "v1beta1.Metrics", "Metrics" },
			want: []string{`spec.group: Invalid value: "Metrics": a lowercase RFC 1123 subdomain`}},
		{name: "the version is a DNS label starting with a letter", change: func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Version = "1.metrics.k8s.io", "1" },
			want: []string{`spec.version: Invalid value: "1": a DNS-1035 label must consist of lower case alphanumeric characters`}},
		{name: "groupPriorityMinimum is at least 1", change: func(s *apiregistrationv1.APIService) { s.Spec.GroupPriorityMinimum = 0 },
			want: []string{"spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000"}},
		{name: "groupPriorityMinimum is at most 20000", change: func(s *apiregistrationv1.APIService) { s.Spec.GroupPriorityMinimum = 20001 },
			want: []string{"spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000"}},
		{name: "versionPriority is between 1 and 1000", change: func(s *apiregistrationv1.APIService) { s.Spec.VersionPriority = 1001 },
			want: []string{"spec.versionPriority: Invalid value: 1001: must be positive and less than 1000"}},
		{name: "a Local APIService may not have a caBundle", change: func(s *apiregistrationv1.APIService) {
			s.Spec.Service, s.Spec.InsecureSkipTLSVerify, s.Spec.CABundle = nil, false, []byte("pem")
		}, want: []string{`spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle`}},
		{name: "a Local APIService may not skip TLS verification", change: func(s *apiregistrationv1.APIService) { s.Spec.Service = nil },
			want: []string{"spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify"}},
		{name: "a service reference names its namespace and name", change: func(s *apiregistrationv1.APIService) { s.Spec.Service.Namespace, s.Spec.Service.Name = "", "" },
			want: []string{"spec.service.namespace: Required value", "spec.service.name: Required value"}},
		{name: "a service port is a port number", change: func(s *apiregistrationv1.APIService) { s.Spec.Service.Port = ptr.To[int32](70000) },
			want: []string{"spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"}},
		{name: "a caBundle and insecureSkipTLSVerify exclude each other", change: func(s *apiregistrationv1.APIService) { s.Spec.CABundle = []byte("pem") },
			want: []string{"spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := validAPIService()
			tc.change(svc)
			errs := ValidateAPIService(svc)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d: %q", len(errs), errs, len(tc.want), tc.want)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(errs[i].Error(), want) {
					t.Errorf("error %d: %q, want it to start with %q", i, errs[i].Error(), want)
				}
			}
		})
	}
}

func TestAStatusConditionIsTrueFalseOrUnknown(t *testing.T) {
	svc := validAPIService()
	svc.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: "Maybe"}}
	errs := validateStatus(svc)
	if len(errs) != 1 || errs[0].Error() != `status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"` {
		t.Fatalf("got %v", errs)
	}
	svc.Status.Conditions[0].Status = apiregistrationv1.ConditionFalse
	if errs := validateStatus(svc); len(errs) != 0 {
		t.Fatalf("False is a status: %v", errs)
	}
}
