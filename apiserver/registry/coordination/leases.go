// Package coordination declares coordination.k8s.io/v1 Leases: each
// kubelet renews one in kube-node-lease as its heartbeat, which the node
// lifecycle controller reads.
//
// It all lives in leases.go.
package coordination

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
)

var Leases = &apiserver.Resource{
	GroupVersion: coordinationv1.SchemeGroupVersion, Name: "leases", Kind: "Lease", Namespaced: true,
	Columns: []apiserver.Column{{Name: "Holder", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		l := obj.(*coordinationv1.Lease)
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return []any{holder, apiserver.Age(l.CreationTimestamp, now)}
	},
	New:     func() runtime.Object { return &coordinationv1.Lease{} },
	NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
}
