package admission

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/mkube/mkube/internal/quota"
)

// checkRequest charges one write to the quotas (Kubernetes'
// CheckRequest): it returns copies of them with the write's usage added
// to status.used, or the 403 that refuses the write. For each quota:
//
//  1. it must concern the object (quota.Matches: a name the resource
//     counts towards, every scope);
//  2. the object must state what the quota needs (a cpu quota needs
//     every container's cpu request): "failed quota: <name>: must
//     specify ...";
//  3. the controller must have counted the quota's names once: "status
//     unknown for quota: <name>, resources: ...";
//  4. used + requested must stay within hard on every name requested:
//     "exceeded quota: <name>, requested: ..., used: ..., limited: ...".
//
// An update is charged only what it adds to the object it replaces.
func checkRequest(quotas []corev1.ResourceQuota, a *Attributes, e quota.Evaluator, now time.Time) ([]corev1.ResourceQuota, error) {
	obj := a.Object
	var concerned []int
	for i := range quotas {
		q := &quotas[i]
		match, err := quota.Matches(e, q, obj)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("match quota %s: %w", q.Name, err))
		}
		if !match {
			continue
		}
		limited := e.Matching(quota.Names(q.Status.Hard))
		if err := e.Constraints(limited, obj); err != nil {
			return nil, quotaForbidden(a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		if len(quota.Unknown(q.Status.Hard, q.Status.Used, limited)) > 0 {
			return nil, quotaForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, quota.FormatNames(limited)))
		}
		concerned = append(concerned, i)
	}
	if len(concerned) == 0 {
		return quotas, nil
	}

	usage, err := e.Usage(obj, now)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if neg := quota.Negative(usage); len(neg) > 0 {
		return nil, quotaForbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", quota.FormatNames(neg)))
	}
	delta := map[int]corev1.ResourceList{}
	for _, i := range concerned {
		delta[i] = usage
	}
	if a.OldObject != nil {
		// The old object was charged already, to the quotas it matched.
		prev, err := e.Usage(a.OldObject, now)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		added := quota.SubtractNonNegative(usage, prev)
		for _, i := range concerned {
			if ok, err := quota.Matches(e, &quotas[i], a.OldObject); err == nil && ok {
				delta[i] = added
			}
		}
	}

	out := make([]corev1.ResourceQuota, len(quotas))
	for i := range quotas {
		out[i] = *quotas[i].DeepCopy()
	}
	for _, i := range concerned {
		q := &out[i]
		requested := quota.Mask(quota.RemoveZeros(delta[i]), quota.Names(q.Status.Hard))
		if len(requested) == 0 {
			continue
		}
		used := quota.Add(q.Status.Used, requested)
		// A status write (a claim's allocation shrinking or growing
		// after the fact) is recorded, never refused.
		if a.Subresource != "status" {
			if ok, over := quota.LessThanOrEqual(quota.Mask(used, quota.Names(requested)), q.Status.Hard); !ok {
				return nil, quotaForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
					quota.Format(quota.Mask(requested, over)), quota.Format(quota.Mask(q.Status.Used, over)),
					quota.Format(quota.Mask(q.Status.Hard, over))))
			}
		}
		q.Status.Used = used
	}
	return out, nil
}

// quotaForbidden is admission's 403 about the object written, named as it
// will be stored (a generated name is already chosen), as Kubernetes'
// admission.NewForbidden names it.
func quotaForbidden(a *Attributes, err error) error {
	name := "Unknown"
	if m, merr := meta.Accessor(a.Object); merr == nil {
		switch {
		case m.GetName() != "":
			name = m.GetName()
		case m.GetGenerateName() != "":
			name = m.GetGenerateName()
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}
