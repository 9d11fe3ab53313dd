package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/store"
)

// PodDisruptionBudgets limit voluntary disruptions: `kubectl drain` evicts
// pods through the pods/eviction subresource, and the API server refuses
// (429) an eviction that would leave fewer healthy pods than the budget
// allows. The disruption controller keeps each budget's status (how many
// pods are healthy, how many disruptions are allowed) up to date.

var podDisruptionBudgetsResource = &Resource{
	GroupVersion: policyv1.SchemeGroupVersion, Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true,
	ShortNames: []string{"pdb"}, Status: true,
	New:     func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
	NewList: func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
	Columns: []Column{{Name: "Min Available", Type: "string"}, {Name: "Max Unavailable", Type: "string"},
		{Name: "Allowed Disruptions", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		str := func(v *intstr.IntOrString) string {
			if v == nil {
				return "N/A"
			}
			return v.String()
		}
		return []any{str(pdb.Spec.MinAvailable), str(pdb.Spec.MaxUnavailable), int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp, now)}
	},
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*policyv1.PodDisruptionBudget).Status = policyv1.PodDisruptionBudgetStatus{}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
			return field.ErrorList{field.Invalid(field.NewPath("spec"), pdb.Spec, "minAvailable and maxUnavailable cannot be both set")}
		}
		return nil
	},
}

// evictionSubresource is advertised under pods, in group policy/v1, which
// is how kubectl drain knows it may evict rather than delete.
var evictionSubresource = Subresource{Name: "eviction", Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}}

// serveEviction is POST pods/<name>/eviction: delete the pod, unless a
// PodDisruptionBudget covering it has no disruption left to allow.
func (s *Server) serveEviction(q *request) {
	data, err := readBody(q.r)
	if err != nil {
		writeError(q.w, err)
		return
	}
	obj, err := decodeInto(data, policyv1.SchemeGroupVersion.WithKind("Eviction"), &policyv1.Eviction{})
	if err != nil {
		writeError(q.w, err)
		return
	}
	ev := obj.(*policyv1.Eviction)
	if ev.Name != "" && ev.Name != q.info.Name {
		writeError(q.w, badRequest("name in URL does not match name in Eviction object"))
		return
	}
	ctx := q.r.Context()
	cur, err := q.st.Get(ctx, q.info.Namespace, q.info.Name)
	if err != nil {
		writeError(q.w, err)
		return
	}
	pod := cur.(*corev1.Pod)
	// A pod that finished, or is already going, disrupts nothing more.
	if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		if err := s.takeDisruption(ctx, pod); err != nil {
			writeError(q.w, err)
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
	if _, _, err := q.st.Delete(ctx, q.info.Namespace, q.info.Name, opts); err != nil {
		writeError(q.w, err)
		return
	}
	s.log.Info("evicted pod", "pod", objectKey(pod))
	writeJSON(q.w, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// takeDisruption checks the pod's budget and, if it allows one more
// disruption, records it in the budget's status (decrementing
// disruptionsAllowed), so two concurrent evictions cannot both pass.
func (s *Server) takeDisruption(ctx context.Context, pod *corev1.Pod) error {
	pdbs := s.storageOf(policyv1.SchemeGroupVersion, "poddisruptionbudgets")
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
		pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(s.now())
		return pdb, nil
	})
	return err
}

func tooManyRequests(message, cause string) error {
	err := apierrors.NewTooManyRequests(message, 10)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: cause}}
	return err
}
