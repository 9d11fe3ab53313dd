package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StatusWriter is the one write admission makes besides the object it
// judges: ResourceQuota records what it charged in the quota's
// status.used before the object is stored, as Kubernetes' quota admission
// does with an UpdateStatus of its own, so that two creates at once
// cannot both take the last unit of a quota.
//
// The API server's Objects is also a StatusWriter; a plugin that needs
// it asserts it, and fails the write if it is missing rather than
// admit what it could not record.
type StatusWriter interface {
	// UpdateStatus replaces the status of the stored object obj names
	// (namespace, name) with obj's, as PUT <resource>/status would,
	// if obj's resourceVersion is still the stored one; a 409 Conflict
	// if it is not, so the caller reads again and recomputes. In a dry
	// run it writes nothing.
	UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error)
}
