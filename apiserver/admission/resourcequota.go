package admission

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/internal/quota"
)

// ResourceQuota enforces the namespace's ResourceQuotas on every write
// that can change what the namespace uses (seed 003 八: namespaces let
// groups share one cluster's resources; a quota says how much of them
// each may take, in objects and in the cpu and memory of 5.4): it
// charges the object to each quota that counts it, and refuses it, 403,
// when one would go over its hard limit:
//
//	pods "web" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2
//
// It runs last, once the object is valid (Validating), and records the
// new usage in the quota's status.used before the object is stored, with
// a resourceVersion-checked status update, so that concurrent writes
// cannot both take the same last unit; the resource quota controller
// later recounts from what exists, giving back what deleted objects held
// (and what a write that failed after admission was charged).
var ResourceQuota = Plugin{Name: "ResourceQuota", Admit: admitResourceQuota, Validating: true}

var resourceQuotas = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

// quotaUpdateRetries is how often a charge is recomputed after losing a
// race for a quota's status, as Kubernetes' evaluator retries: the
// namespace lock leaves only the controller to race with, which writes
// rarely.
const quotaUpdateRetries = 3

func admitResourceQuota(ctx context.Context, a *Attributes, objs Objects) error {
	gr := a.Resource.GroupResource()
	// Cluster-scoped objects, and namespaces themselves, are in no
	// namespace's quota.
	if a.Namespace == "" || a.Resource == namespaces || quota.Ignored.Has(gr) {
		return nil
	}
	e := quota.For(gr)
	w := quota.Write{Subresource: a.Subresource, Object: a.Object, Old: a.OldObject}
	if !e.Handles(w) {
		return nil
	}
	writer, ok := objs.(StatusWriter)
	if !ok {
		return apierrors.NewInternalError(errors.New("the ResourceQuota admission plugin cannot record usage: its Objects is not a StatusWriter"))
	}
	// Most namespaces have no quota: they are not serialised at all.
	if quotas, err := listQuotas(ctx, objs, a.Namespace, nil); err != nil || len(quotas) == 0 {
		return err
	}
	defer quotaLocks.lock(a.Namespace)()

	var pending []string // the quotas still to charge, by name; nil: all
	for attempt := 0; ; attempt++ {
		quotas, err := listQuotas(ctx, objs, a.Namespace, pending)
		if err != nil || len(quotas) == 0 {
			return err
		}
		charged, err := checkRequest(quotas, a, e, a.Now)
		if err != nil {
			return err
		}
		pending = pending[:0]
		var lastErr error
		for i := range charged {
			if quota.Equals(charged[i].Status.Used, quotas[i].Status.Used) {
				continue
			}
			_, err := writer.UpdateStatus(ctx, resourceQuotas, &charged[i])
			switch {
			case apierrors.IsConflict(err):
				// The controller wrote first: charge this quota again,
				// on its new figures; the ones written stay charged.
				pending, lastErr = append(pending, charged[i].Name), err
			case err != nil:
				return err
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if attempt == quotaUpdateRetries {
			return lastErr
		}
	}
}

// listQuotas reads the namespace's quotas from storage (not a cache: a
// charge must start from the latest figures), keeping only those named in
// only unless it is nil.
func listQuotas(ctx context.Context, objs Objects, ns string, only []string) ([]corev1.ResourceQuota, error) {
	list, err := objs.List(ctx, resourceQuotas, ns)
	if err != nil {
		return nil, fmt.Errorf("list resource quotas: %w", err)
	}
	out := make([]corev1.ResourceQuota, 0, len(list))
	for _, o := range list {
		q := o.(*corev1.ResourceQuota)
		if only == nil || slices.Contains(only, q.Name) {
			out = append(out, *q)
		}
	}
	return out, nil
}

// quotaLocks serialises quota admission within each namespace. Kubernetes
// gets the same effect from a work queue keyed by namespace, whose
// worker judges the waiting requests of one namespace together; a lock
// per namespace is the simplest form of it. Namespaces do not wait for
// each other.
var quotaLocks = &namespaceLocks{locks: map[string]*namespaceLock{}}

type namespaceLocks struct {
	mu    sync.Mutex
	locks map[string]*namespaceLock
}

// namespaceLock is one namespace's lock, and how many writes hold it or
// wait for it; the last one out removes it.
type namespaceLock struct {
	sync.Mutex
	users int
}

// lock takes ns's lock and returns its release.
func (l *namespaceLocks) lock(ns string) (unlock func()) {
	l.mu.Lock()
	nl := l.locks[ns]
	if nl == nil {
		nl = &namespaceLock{}
		l.locks[ns] = nl
	}
	nl.users++
	l.mu.Unlock()

	nl.Lock()
	return func() {
		nl.Unlock()
		l.mu.Lock()
		if nl.users--; nl.users == 0 {
			delete(l.locks, ns)
		}
		l.mu.Unlock()
	}
}
