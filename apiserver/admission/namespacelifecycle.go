package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceLifecycle: nothing is created in a namespace that does not
// exist (404, the namespace's own NotFound) or that is being deleted
// (403), so a namespace the namespace controller is emptying stays empty.
var NamespaceLifecycle = Plugin{Name: "NamespaceLifecycle", Admit: admitNamespaceLifecycle}

func admitNamespaceLifecycle(ctx context.Context, a *Attributes, objs Objects) error {
	if a.Operation != Create || a.Namespace == "" {
		return nil
	}
	obj, err := objs.Get(ctx, namespaces, "", a.Namespace)
	if err != nil {
		return err
	}
	if obj.(*corev1.Namespace).DeletionTimestamp != nil {
		return apierrors.NewForbidden(schema.GroupResource{Resource: namespaces.Resource}, a.Namespace,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}
