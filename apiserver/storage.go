package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/storageformat"
	"github.com/mkube/mkube/store"
)

// Storage is the generic REST storage of one Resource: it owns the server's
// half of every object's metadata and turns the store's optimistic
// concurrency into Kubernetes semantics.
type Storage struct {
	res   *Resource
	store *store.Store
	now   func() time.Time
	// admission is the server's chain; objects is what it may read.
	admission *admission.Chain
	objects   admission.Objects
	// writeMu serialises creates and updates if res.SerializeWrites.
	writeMu sync.Mutex
	// metrics times each etcd request (etcd_request_duration_seconds).
	metrics *serverMetrics
	// codec is the format objects are written in (--storage-media-type),
	// and reads both.
	codec storageformat.Codec
}

// Resource is the kind this storage keeps.
func (s *Storage) Resource() *Resource { return s.res }

// serialize holds writeMu if the resource asks for it; call the result to
// release.
func (s *Storage) serialize() (unlock func()) {
	if !s.res.SerializeWrites {
		return func() {}
	}
	s.writeMu.Lock()
	return s.writeMu.Unlock
}

func (s *Storage) key(ns, name string) string { return store.Key(s.res.storageName(), ns, name) }

// encode serialises obj for etcd in the server's storage format (JSON by
// default, so that learners can read it with etcdctl; package
// storageformat), with apiVersion and kind, and without resourceVersion,
// which is etcd's ModRevision and is filled in on the way out.
func (s *Storage) encode(obj runtime.Object) ([]byte, error) {
	obj.GetObjectKind().SetGroupVersionKind(s.res.GVK())
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	stored := obj
	if c := s.res.StoredAs; c != nil {
		if stored, err = c.ToStored(obj); err != nil {
			return nil, err
		}
		stored.GetObjectKind().SetGroupVersionKind(c.GVK)
	}
	return s.codec.Encode(stored)
}

// decode reads a stored value, in either format whatever the server
// writes, and stamps it with its revision. Every read of a stored object
// comes here: Get, List, the writes' reads and the watch cache.
func (s *Storage) decode(value []byte, rev int64) (runtime.Object, error) {
	obj := s.res.New()
	if c := s.res.StoredAs; c != nil {
		obj = c.New()
	}
	if err := s.codec.Decode(value, obj); err != nil {
		return nil, fmt.Errorf("decode stored %s: %w", s.res.Name, err)
	}
	if c := s.res.StoredAs; c != nil {
		var err error
		if obj, err = c.FromStored(obj); err != nil {
			return nil, &conversionError{err}
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(s.res.GVK())
	setRV(obj, rev)
	return obj, nil
}

// conversionError is a stored object that could not be converted to the
// version read: one that may convert if tried again.
type conversionError struct{ err error }

func (e *conversionError) Error() string { return e.err.Error() }
func (e *conversionError) Unwrap() error { return e.err }

func setRV(obj runtime.Object, rev int64) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(strconv.FormatInt(rev, 10))
	}
}

// Get reads one object.
func (s *Storage) Get(ctx context.Context, ns, name string) (runtime.Object, error) {
	done := s.metrics.etcdTimer("get", s.res, s.now)
	kv, err := s.store.Get(ctx, s.key(ns, name))
	done()
	if err != nil {
		return nil, storeError(err, s.res.GroupResource(), name)
	}
	obj, err := s.decode(kv.Value, kv.Rev)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// List reads a page of objects in ns ("" = all namespaces) at one revision.
func (s *Storage) List(ctx context.Context, ns string, opts store.ListOptions) ([]runtime.Object, store.ListResult, error) {
	done := s.metrics.etcdTimer("list", s.res, s.now)
	res, err := s.store.List(ctx, store.Prefix(s.res.storageName(), ns), opts)
	done()
	if err != nil {
		return nil, res, storeError(err, s.res.GroupResource(), "")
	}
	objs := make([]runtime.Object, 0, len(res.KVs))
	for _, kv := range res.KVs {
		obj, err := s.decode(kv.Value, kv.Rev)
		if err != nil {
			return nil, res, apierrors.NewInternalError(err)
		}
		objs = append(objs, obj)
	}
	return objs, res, nil
}

// Create fills the server-owned metadata, defaults and validates obj, and
// writes it (seed step 3: "the APIServer stores the pod in etcd, then
// acknowledges the client").
func (s *Storage) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if !s.res.Namespaced {
		m.SetNamespace("")
	} else if m.GetNamespace() == "" {
		return nil, badRequest("a namespace is required for namespaced resources")
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		// Kubernetes appends 5 random characters and lets a clash surface
		// as AlreadyExists; with 27^5 names that is rare enough.
		m.SetName(m.GetGenerateName() + utilrand.String(5))
	}
	if m.GetName() == "" {
		return nil, apierrors.NewInvalid(s.res.GVK().GroupKind(), "", requiredName())
	}
	m.SetUID(types.UID(uuid.NewUUID()))
	m.SetCreationTimestamp(metav1.NewTime(s.now()))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetGeneration(0)
	if hasSpec(obj) {
		m.SetGeneration(1)
	}
	if s.res.PrepareForCreate != nil {
		s.res.PrepareForCreate(obj)
	}
	defer s.serialize()()
	if err := s.admit(ctx, obj, nil, ""); err != nil {
		return nil, err
	}
	if isDryRun(ctx) {
		return obj, nil // admitted and validated, not written
	}
	data, err := s.encode(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	done := s.metrics.etcdTimer("create", s.res, s.now)
	rev, err := s.store.Create(ctx, s.key(m.GetNamespace(), m.GetName()), data)
	done()
	if err != nil {
		return nil, storeError(err, s.res.GroupResource(), m.GetName())
	}
	setRV(obj, rev)
	return obj, nil
}

// admit defaults an object about to be written (old nil on create), runs
// the admission chain and the kind's own Admit, validates it, and runs the
// validating admission plugins last. A status update (subresource
// "status") skips the kind's validation, which checks the spec: the spec
// is the stored one.
func (s *Storage) admit(ctx context.Context, obj, old runtime.Object, subresource string) error {
	if s.res.Default != nil {
		s.res.Default(obj)
	}
	m, _ := meta.Accessor(obj)
	a := &admission.Attributes{Operation: admission.Create, Resource: s.res.GroupVersionResource(),
		Subresource: subresource, Namespace: m.GetNamespace(), Object: obj, OldObject: old, Now: s.now()}
	if old != nil {
		a.Operation = admission.Update
	}
	s.describe(ctx, a, m.GetName()) // admission_webhooks.go: what webhooks are also told
	if err := s.admission.Admit(ctx, a, s.objects); err != nil {
		return err
	}
	if s.res.Admit != nil {
		if err := s.res.Admit(ctx, s.objects, obj, old); err != nil {
			return err
		}
	}
	errs := validateMeta(obj, s.res)
	if s.res.Validate != nil && subresource != statusName && !s.res.updatesItself(subresource) {
		errs = append(errs, s.res.Validate(obj, old)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(s.res.GVK().GroupKind(), m.GetName(), errs)
	}
	return s.admission.Validate(ctx, a, s.objects) // the validating plugins judge a valid object
}

// admitDelete asks the admission plugins that judge deletions about
// deleting cur (NodeRestriction: a node deletes only its own pods).
func (s *Storage) admitDelete(ctx context.Context, cur runtime.Object, opts *metav1.DeleteOptions) error {
	m, _ := meta.Accessor(cur)
	a := &admission.Attributes{Operation: admission.Delete, Resource: s.res.GroupVersionResource(),
		Namespace: m.GetNamespace(), OldObject: cur, Now: s.now()}
	s.describe(ctx, a, m.GetName())
	a.Options = webhookDeleteOptions(opts, a.DryRun)
	if err := s.admission.Admit(ctx, a, s.objects); err != nil {
		return err
	}
	return s.admission.Validate(ctx, a, s.objects) // validating webhooks judge deletions too
}

// UpdateFunc computes the new object from a private copy of the current one.
type UpdateFunc func(cur runtime.Object) (runtime.Object, error)

// Update is Kubernetes' GuaranteedUpdate: read, compute, write if nobody
// wrote in between, else read again and recompute. A caller that wants a
// precondition (a PUT carrying resourceVersion) checks it in fn, so a stale
// client gets 409 while the server's own retries stay invisible.
func (s *Storage) Update(ctx context.Context, ns, name string, fn UpdateFunc) (runtime.Object, error) {
	key := s.key(ns, name)
	defer s.serialize()()
	for {
		done := s.metrics.etcdTimer("get", s.res, s.now)
		kv, err := s.store.Get(ctx, key)
		done()
		if err != nil {
			return nil, storeError(err, s.res.GroupResource(), name)
		}
		cur, err := s.decode(kv.Value, kv.Rev)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		next, err := fn(cur.DeepCopyObject())
		if err != nil {
			return nil, err
		}
		if isDryRun(ctx) {
			return next, nil
		}
		if finalized(next, cur) {
			// The last finalizer of an object being deleted is gone:
			// finish the deletion the user asked for earlier.
			if _, err := s.store.Delete(ctx, key, kv.Rev); errors.Is(err, store.ErrConflict) {
				continue
			} else if err != nil {
				return nil, storeError(err, s.res.GroupResource(), name)
			}
			return next, nil
		}
		data, err := s.encode(next)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if bytes.Equal(data, kv.Value) {
			// Nothing changed: no write, no new resourceVersion, no watch
			// event — as Kubernetes, which is how kubectl can print
			// "patched (no change)".
			return cur, nil
		}
		done = s.metrics.etcdTimer("update", s.res, s.now)
		rev, err := s.store.Update(ctx, key, data, kv.Rev)
		done()
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, storeError(err, s.res.GroupResource(), name)
		}
		setRV(next, rev)
		return next, nil
	}
}

// finalized reports whether an update removed the last finalizer of an
// object whose deletion is due (no grace period left to wait for).
func finalized(next, cur runtime.Object) bool {
	n, _ := meta.Accessor(next)
	c, _ := meta.Accessor(cur)
	if n.GetDeletionTimestamp() == nil || len(n.GetFinalizers()) > 0 || len(c.GetFinalizers()) == 0 {
		return false
	}
	g := n.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// prepareUpdate merges a client's new object with the current one: the
// server-owned metadata stays, the status stays (unless this is the status
// subresource, which changes nothing but the status), a spec change bumps
// metadata.generation, and the result is defaulted and validated.
func (s *Storage) prepareUpdate(ctx context.Context, cur, next runtime.Object, subresource string) (runtime.Object, error) {
	c, _ := meta.Accessor(cur)
	n, err := meta.Accessor(next)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if rv := n.GetResourceVersion(); rv != "" && rv != c.GetResourceVersion() {
		return nil, apierrors.NewConflict(s.res.GroupResource(), c.GetName(), errors.New(conflictMessage))
	}
	if n.GetName() != c.GetName() {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", n.GetName(), c.GetName())
	}
	if sub, ok := s.res.subresource(subresource); ok && sub.Update != nil {
		out, errs := sub.Update(cur, next, s.now())
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(s.res.GVK().GroupKind(), c.GetName(), errs)
		}
		return out, s.admit(ctx, out, cur, subresource)
	}
	if subresource == statusName {
		// The spec is the stored one: it is not validated again (as
		// Kubernetes' status strategies), so an object stored before a
		// rule was added keeps its controllers able to report status.
		out := cur.DeepCopyObject()
		copyField(out, next, "Status")
		if s.res.StatusWritesMetadata {
			o, _ := meta.Accessor(out)
			o.SetLabels(n.GetLabels())
			o.SetAnnotations(n.GetAnnotations())
		}
		return out, s.admit(ctx, out, cur, subresource)
	}
	n.SetNamespace(c.GetNamespace())
	n.SetUID(c.GetUID())
	n.SetCreationTimestamp(c.GetCreationTimestamp())
	n.SetDeletionTimestamp(c.GetDeletionTimestamp())
	n.SetDeletionGracePeriodSeconds(c.GetDeletionGracePeriodSeconds())
	n.SetGeneration(c.GetGeneration())
	n.SetResourceVersion(c.GetResourceVersion())
	if s.res.hasStatus() {
		copyField(next, cur, "Status")
	}
	if err := s.admit(ctx, next, cur, subresource); err != nil {
		return nil, err
	}
	if specChanged(cur, next) {
		n.SetGeneration(c.GetGeneration() + 1)
	}
	return next, nil
}

// Delete removes an object, or starts its deletion:
//   - with a grace period (a pod on a node), it only sets deletionTimestamp
//     and deletionGracePeriodSeconds; the kubelet kills the containers and
//     deletes the pod again with gracePeriodSeconds=0 (seed 003, pod
//     termination);
//   - with finalizers (including orphan and foregroundDeletion, which the
//     propagationPolicy adds), it sets deletionTimestamp and the object lives
//     on until the garbage collector has removed them;
//   - otherwise it is gone at once.
//
// deleted reports whether the object is gone from etcd.
func (s *Storage) Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) (obj runtime.Object, deleted bool, err error) {
	key := s.key(ns, name)
	for {
		done := s.metrics.etcdTimer("get", s.res, s.now)
		kv, err := s.store.Get(ctx, key)
		done()
		if err != nil {
			return nil, false, storeError(err, s.res.GroupResource(), name)
		}
		cur, err := s.decode(kv.Value, kv.Rev)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		m, _ := meta.Accessor(cur)
		if err := checkPreconditions(s.res, m, opts.Preconditions); err != nil {
			return nil, false, err
		}
		if err := s.admitDelete(ctx, cur, opts); err != nil {
			return nil, false, err
		}
		next, pending := s.beginDeletion(cur, opts)
		if isDryRun(ctx) {
			if next != nil {
				return next, false, nil
			}
			return cur, !pending, nil
		}
		if pending {
			if next == nil { // already terminating, nothing to change
				return cur, false, nil
			}
			data, err := s.encode(next)
			if err != nil {
				return nil, false, apierrors.NewInternalError(err)
			}
			done := s.metrics.etcdTimer("update", s.res, s.now)
			rev, err := s.store.Update(ctx, key, data, kv.Rev)
			done()
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			if err != nil {
				return nil, false, storeError(err, s.res.GroupResource(), name)
			}
			setRV(next, rev)
			return next, false, nil
		}
		done = s.metrics.etcdTimer("delete", s.res, s.now)
		rev, err := s.store.Delete(ctx, key, kv.Rev)
		done()
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, storeError(err, s.res.GroupResource(), name)
		}
		setRV(cur, rev)
		return cur, true, nil
	}
}

// beginDeletion decides how cur is deleted. pending=false: remove it now.
// pending=true: write next (nil if cur needs no change) and wait.
func (s *Storage) beginDeletion(cur runtime.Object, opts *metav1.DeleteOptions) (next runtime.Object, pending bool) {
	obj := cur.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	changed := addPropagationFinalizer(m, opts)

	var grace int64
	graceful := false
	if s.res.GracePeriod != nil {
		grace, graceful = s.res.GracePeriod(obj, opts.GracePeriodSeconds)
	}
	waits := s.res.BeginDelete != nil && s.res.BeginDelete(obj)
	if !graceful && !waits && len(m.GetFinalizers()) == 0 {
		return nil, false
	}
	if !graceful {
		grace = 0
	}
	// An object already terminating only has its grace period shortened.
	if old := m.GetDeletionGracePeriodSeconds(); m.GetDeletionTimestamp() != nil && old != nil && *old <= grace {
		if changed || waits {
			return obj, true
		}
		return nil, true
	}
	// The deletion's start changes what the object's controllers may do
	// (nothing much, from now on), so it bumps a generation the object
	// has, once, as Kubernetes does (rest.BeforeDelete, and the store for
	// objects held by finalizers): a pod deleted gracefully goes from
	// generation 1 to 2.
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	deadline := metav1.NewTime(s.now().Add(time.Duration(grace) * time.Second))
	m.SetDeletionTimestamp(&deadline)
	m.SetDeletionGracePeriodSeconds(&grace)
	return obj, true
}

// addPropagationFinalizer records a non-default propagationPolicy as the
// finalizer the garbage collector acts on: "orphan" makes it strip the
// dependents' ownerReferences, "foregroundDeletion" makes it delete them
// first. Background (the default) needs none: the owner goes at once and
// the collector deletes the dependents afterwards.
func addPropagationFinalizer(m metav1.Object, opts *metav1.DeleteOptions) bool {
	policy := opts.PropagationPolicy
	if policy == nil && opts.OrphanDependents != nil { //nolint:staticcheck // older clients still send it
		p := metav1.DeletePropagationBackground
		if *opts.OrphanDependents { //nolint:staticcheck
			p = metav1.DeletePropagationOrphan
		}
		policy = &p
	}
	if policy == nil {
		return false
	}
	var f string
	switch *policy {
	case metav1.DeletePropagationOrphan:
		f = metav1.FinalizerOrphanDependents
	case metav1.DeletePropagationForeground:
		f = metav1.FinalizerDeleteDependents
	default:
		return false
	}
	for _, have := range m.GetFinalizers() {
		if have == f {
			return false
		}
	}
	m.SetFinalizers(append(m.GetFinalizers(), f))
	return true
}

func checkPreconditions(res *Resource, m metav1.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(res.GroupResource(), m.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(res.GroupResource(), m.GetName(),
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// dryRunKey marks a request context ?dryRun=All: every step of a write
// runs — admission, defaulting, validation, conflicts — except the write.
type dryRunKey struct{}

func withDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, dryRunKey{}, true)
}

func isDryRun(ctx context.Context) bool { return ctx.Value(dryRunKey{}) != nil }
