package replicaset

import (
	"errors"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failureConditions are the ReplicaSet's conditions after a sync whose
// pod creations or deletions ended with manageErr (nil: they all
// worked), as Kubernetes' calculateStatus keeps them: a first failure
// adds ReplicaFailure=True with reason FailedCreate (too few pods) or
// FailedDelete (too many) and the error as message, which is how
// `kubectl describe rs` tells why a ReplicaSet is short of pods, an
// exceeded quota say; a sync without error removes it. A failure while
// the condition is there keeps it as it was, with its first message and
// time. diff is the pod count minus spec.replicas, before the sync. The
// result is a new slice: conds may be the cache's.
func failureConditions(conds []appsv1.ReplicaSetCondition, manageErr error, diff int, now time.Time) []appsv1.ReplicaSetCondition {
	i := slices.IndexFunc(conds, func(c appsv1.ReplicaSetCondition) bool { return c.Type == appsv1.ReplicaSetReplicaFailure })
	switch {
	case manageErr != nil && i < 0:
		reason := ""
		switch {
		case diff < 0:
			reason = "FailedCreate"
		case diff > 0:
			reason = "FailedDelete"
		}
		return append(slices.Clone(conds), appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure,
			Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: apiMessage(manageErr)})
	case manageErr == nil && i >= 0:
		return slices.Delete(slices.Clone(conds), i, i+1)
	}
	return conds
}

// apiMessage is the API server's own words for err when it refused the
// request (`pods "web-x7k2p" is forbidden: exceeded quota: ...`),
// without the controller's wrapping, as the condition shows it in
// Kubernetes; err's text otherwise.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}
