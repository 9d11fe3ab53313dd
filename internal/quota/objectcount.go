package quota

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NewObjectCount is the evaluator of a resource that costs only its
// number (Kubernetes' objectCountEvaluator): one count/<resource>.<group>
// per object, and one of alias too if it is not "" (configmaps, secrets,
// replicationcontrollers, resourcequotas have the older short names).
// Objects are counted when created; nothing about an update changes
// their number.
func NewObjectCount(gr schema.GroupResource, alias corev1.ResourceName) Evaluator {
	e := objectCount{gr: gr, names: sets.New(ObjectCountName(gr))}
	if alias != "" {
		e.names.Insert(alias)
	}
	return e
}

type objectCount struct {
	gr    schema.GroupResource
	names sets.Set[corev1.ResourceName]
}

func (e objectCount) GroupResource() schema.GroupResource { return e.gr }

func (objectCount) Handles(w Write) bool { return w.Subresource == "" && w.Old == nil }

func (e objectCount) Matching(names []corev1.ResourceName) []corev1.ResourceName {
	return intersect(names, e.names)
}

func (objectCount) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

func (objectCount) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (e objectCount) Usage(runtime.Object, time.Time) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name := range e.names {
		out[name] = one()
	}
	return out, nil
}
