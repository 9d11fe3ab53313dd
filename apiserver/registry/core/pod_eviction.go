package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/store"
)

// evictionSubresource is POST pods/<name>/eviction: delete the pod, unless
// a PodDisruptionBudget covering it has no disruption left to allow (429).
// It is advertised in group policy/v1, which is how `kubectl drain` knows
// it may evict rather than delete.
var evictionSubresource = apiserver.Subresource{Name: "eviction", Group: "policy", Version: "v1", Kind: "Eviction",
	Verbs: []string{"create"}, Serve: serveEviction}

func serveEviction(q *apiserver.Request) {
	obj, err := q.DecodeBodyAs(policyv1.SchemeGroupVersion.WithKind("Eviction"), &policyv1.Eviction{})
	if err != nil {
		q.Fail(err)
		return
	}
	ev := obj.(*policyv1.Eviction)
	if ev.Name != "" && ev.Name != q.Info.Name {
		q.Fail(apierrors.NewBadRequest("name in URL does not match name in Eviction object"))
		return
	}
	ctx := q.Context()
	cur, err := q.Storage.Get(ctx, q.Info.Namespace, q.Info.Name)
	if err != nil {
		q.Fail(err)
		return
	}
	pod := cur.(*corev1.Pod)
	// A pod that finished, or is already going, disrupts nothing more.
	if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		if err := takeDisruption(ctx, q, pod); err != nil {
			q.Fail(err)
			return
		}
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{UID: &pod.UID}
	}
	if err := markDisruptionTarget(q, opts.Preconditions); err != nil {
		q.Fail(err)
		return
	}
	if _, _, err := q.Storage.Delete(ctx, q.Info.Namespace, q.Info.Name, opts); err != nil {
		q.Fail(err)
		return
	}
	q.Log().Info("evicted pod", "pod", client.KeyOf(pod))
	q.Respond(http.StatusCreated, successStatus(http.StatusCreated), nil)
}

// takeDisruption checks the pod's budget and, if it allows one more
// disruption, records it in the budget's status (decrementing
// disruptionsAllowed), so two concurrent evictions cannot both pass.
func takeDisruption(ctx context.Context, q *apiserver.Request, pod *corev1.Pod) error {
	pdbs := q.StorageFor(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"))
	if pdbs == nil {
		return nil // budgets are not served: nothing limits evictions
	}
	objs, _, err := pdbs.List(ctx, pod.Namespace, store.ListOptions{})
	if err != nil {
		return err
	}
	var matching []*policyv1.PodDisruptionBudget
	for _, o := range objs {
		pdb := o.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			matching = append(matching, pdb)
		}
	}
	switch len(matching) {
	case 0:
		return nil
	case 1:
	default:
		return apierrors.NewInternalError(errors.New("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
	}
	_, err = pdbs.Update(ctx, pod.Namespace, matching[0].Name, func(cur runtime.Object) (runtime.Object, error) {
		pdb := cur.(*policyv1.PodDisruptionBudget)
		if pdb.Status.ObservedGeneration < pdb.Generation {
			return nil, tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
				fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
		}
		if pdb.Status.DisruptionsAllowed <= 0 {
			return nil, tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
				fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
		}
		pdb.Status.DisruptionsAllowed--
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(q.Now())
		return pdb, nil
	})
	return err
}

func tooManyRequests(message, cause string) error {
	err := apierrors.NewTooManyRequests(message, 10)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: cause}}
	return err
}

// markDisruptionTarget adds the condition DisruptionTarget=True (reason
// EvictionByEvictionAPI) to the pod before it is deleted, as Kubernetes'
// eviction does: a Job's pod failure policy can tell from it that the
// pod failed because it was evicted, not by its own fault. The deletion's
// preconditions hold for this write too; a resourceVersion precondition
// then moves to the version written.
func markDisruptionTarget(q *apiserver.Request, pre *metav1.Preconditions) error {
	out, err := q.Storage.Update(q.Context(), q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if pre.UID != nil && *pre.UID != pod.UID {
			return nil, apierrors.NewConflict(corev1.Resource("pods"), pod.Name,
				fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, pod.UID))
		}
		if pre.ResourceVersion != nil && *pre.ResourceVersion != "" && *pre.ResourceVersion != pod.ResourceVersion {
			return nil, apierrors.NewConflict(corev1.Resource("pods"), pod.Name,
				fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, pod.ResourceVersion))
		}
		cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.NewTime(q.Now())}
		for i, c := range pod.Status.Conditions {
			if c.Type == corev1.DisruptionTarget {
				if c.Status == cond.Status {
					cond.LastTransitionTime = c.LastTransitionTime
				}
				pod.Status.Conditions[i] = cond
				return pod, nil
			}
		}
		pod.Status.Conditions = append(pod.Status.Conditions, cond)
		return pod, nil
	})
	if err == nil && pre.ResourceVersion != nil && *pre.ResourceVersion != "" {
		rv := out.(*corev1.Pod).ResourceVersion
		pre.ResourceVersion = &rv
	}
	return err
}
