package apiregistration_test

import (
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/mkube/mkube/apiserver/registry"
	"github.com/mkube/mkube/apiserver/registry/apiregistration"
)

// Each built-in group-version has its Local APIService, with Kubernetes'
// priorities; a group-version without a priority in Kubernetes' table
// would be left out, so this test names any that mkube serves.
func TestEveryBuiltinGroupVersionGetsALocalAPIServiceWithKubernetesPriorities(t *testing.T) {
	got := apiregistration.BuiltinAPIServices(registry.Resources, slog.New(slog.DiscardHandler))
	served := map[schema.GroupVersion]bool{}
	for _, res := range registry.Resources {
		served[res.GroupVersion] = true
	}
	for gv := range served {
		name := gv.Version + "." + gv.Group
		if gv == apiregistrationv1.SchemeGroupVersion {
			if got[name] != nil {
				t.Errorf("%s: the aggregator's own group has no APIService in Kubernetes", name)
			}
			continue
		}
		svc := got[name]
		if svc == nil {
			t.Errorf("%s is served but has no APIService: add its priority from Kubernetes' table", name)
			continue
		}
		if svc.Spec.Group != gv.Group || svc.Spec.Version != gv.Version || svc.Spec.Service != nil ||
			svc.Labels["kube-aggregator.kubernetes.io/automanaged"] != "onstart" {
			t.Errorf("%s: %+v, labels %v", name, svc.Spec, svc.Labels)
		}
		if errs := apiregistration.ValidateAPIService(svc); len(errs) > 0 {
			t.Errorf("%s is invalid: %v", name, errs)
		}
	}
	if len(got) != len(served)-1 {
		t.Errorf("%d APIServices for %d served group-versions (apiregistration.k8s.io/v1 excluded)", len(got), len(served))
	}
	for _, tc := range []struct {
		name           string
		group, version int32
	}{
		{"v1.", 18000, 1},
		{"v1.apps", 17800, 15},
		{"v2.autoscaling", 17500, 30},
		{"v1.autoscaling", 17500, 15},
		{"v1.certificates.k8s.io", 17300, 15},
		{"v1.flowcontrol.apiserver.k8s.io", 16100, 21},
	} {
		if svc := got[tc.name]; svc == nil || svc.Spec.GroupPriorityMinimum != tc.group || svc.Spec.VersionPriority != tc.version {
			t.Errorf("%s: %+v, want priorities %d/%d", tc.name, svc, tc.group, tc.version)
		}
	}
}
