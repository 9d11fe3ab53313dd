package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// ServiceAccount: a pod that names no service account runs as its
// namespace's "default" one (seed 003 §六.3). Kubernetes' plugin does this
// on create; mkube also does it on update, so that a `kubectl replace` of
// a manifest that leaves the field out is not taken for a change of it.
// The token volume it would mount comes with the security issue.
var ServiceAccount = Plugin{Name: "ServiceAccount", Admit: admitServiceAccount}

func admitServiceAccount(_ context.Context, a *Attributes, _ Objects) error {
	if !isPodWrite(a) {
		return nil
	}
	pod := a.Object.(*corev1.Pod)
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	pod.Spec.DeprecatedServiceAccount = pod.Spec.ServiceAccountName
	return nil
}
