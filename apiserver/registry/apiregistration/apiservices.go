package apiregistration

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// APIServices are cluster-scoped and named <version>.<group> ("v1." for
// the legacy core group). Their status belongs to the availability
// controller (Controller), written through the status subresource.
var APIServices = &apiserver.Resource{
	GroupVersion: apiregistrationv1.SchemeGroupVersion, Name: "apiservices", Kind: "APIService",
	Categories: []string{"api-extensions"},
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", func(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
		// apiServerStatusStrategy: only the status changes.
		out := cur.(*apiregistrationv1.APIService).DeepCopy()
		out.Status = next.(*apiregistrationv1.APIService).Status
		return out, validateStatus(out)
	})},
	New:     func() runtime.Object { return &apiregistrationv1.APIService{} },
	NewList: func() runtime.Object { return &apiregistrationv1.APIServiceList{} },
	// Kubernetes' name rule is a path segment that is also
	// <version>.<group>; Validate checks the second half.
	NameRule: path.ValidatePathSegmentName,
	PrepareForCreate: func(obj runtime.Object) {
		// apiServerStrategy.PrepareForCreate: a Local APIService is
		// available from its first moment; one backed by a Service waits
		// for the availability controller's check. The storage stamped
		// creationTimestamp from its clock just before, so that is the
		// transition time.
		svc := obj.(*apiregistrationv1.APIService)
		svc.Status = apiregistrationv1.APIServiceStatus{}
		if svc.Spec.Service == nil {
			c := localAvailable
			c.LastTransitionTime = svc.CreationTimestamp
			svc.Status.Conditions = []apiregistrationv1.APIServiceCondition{c}
		}
	},
	Default: func(obj runtime.Object) {
		// SetDefaults_ServiceReference: aggregated API servers listen on 443.
		if ref := obj.(*apiregistrationv1.APIService).Spec.Service; ref != nil && ref.Port == nil {
			ref.Port = ptr.To[int32](443)
		}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return ValidateAPIService(obj.(*apiregistrationv1.APIService))
	},
	// kube-aggregator's table: SERVICE is Local or <namespace>/<name>;
	// AVAILABLE the condition's status, with its reason when not True.
	Columns: []apiserver.Column{{Name: "Service", Type: "string"}, {Name: "Available", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		svc := obj.(*apiregistrationv1.APIService)
		service := "Local"
		if ref := svc.Spec.Service; ref != nil {
			service = ref.Namespace + "/" + ref.Name
		}
		available := string(apiregistrationv1.ConditionUnknown)
		if c := availableCondition(svc); c != nil {
			available = string(c.Status)
			if c.Status != apiregistrationv1.ConditionTrue && c.Reason != "" {
				available = fmt.Sprintf("%s (%s)", c.Status, c.Reason)
			}
		}
		return []any{service, available, apiserver.Age(svc.CreationTimestamp, now)}
	},
}

// availableCondition is the APIService's Available condition, nil if it
// has none yet.
func availableCondition(svc *apiregistrationv1.APIService) *apiregistrationv1.APIServiceCondition {
	for i := range svc.Status.Conditions {
		if svc.Status.Conditions[i].Type == apiregistrationv1.Available {
			return &svc.Status.Conditions[i]
		}
	}
	return nil
}
