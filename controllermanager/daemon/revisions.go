package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/history"
)

// A DaemonSet's history: one ControllerRevision per pod template it has
// run, named <daemonset>-<hash>, labelled controller-revision-hash=<hash>
// like the pods of that template, holding the template as a patch
// (Data) and a number (Revision). `kubectl rollout history daemonset/x`
// lists them; `kubectl rollout undo` applies an old revision's patch to
// the DaemonSet, whose template then matches that revision again, which
// becomes the newest (renumbered), and the rolling update brings its pods
// back.

// templatePatch is the snapshot a revision stores (Kubernetes' getPatch):
// a strategic merge patch that puts the whole template back,
//
//	{"spec":{"template":{...,"$patch":"replace"}}}
//
// made from the DaemonSet's JSON, with the keys sorted. A revision
// matches a DaemonSet when the bytes are equal, so they must be made
// exactly as Kubernetes makes them: kubectl and the conformance tests
// compare them too.
func templatePatch(ds *appsv1.DaemonSet) ([]byte, error) {
	data, err := json.Marshal(ds)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	template := raw["spec"].(map[string]any)["template"].(map[string]any)
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// matches reports whether rev records ds's current template.
func matches(ds *appsv1.DaemonSet, rev *appsv1.ControllerRevision) (bool, error) {
	patch, err := templatePatch(ds)
	if err != nil {
		return false, err
	}
	return bytes.Equal(patch, rev.Data.Raw), nil
}

// templateHash names a template's revision and labels its pods: FNV-32a of
// the template, then of collisionCount, if set, as 8 little-endian bytes,
// encoded with SafeEncodeString (no vowels, so no words), as Kubernetes'
// ComputeHash. Kubernetes hashes a spew dump of the Go struct; mkube its
// JSON, so the values differ from a real cluster's, but not their use.
func templateHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	data, _ := json.Marshal(t)
	h.Write(data)
	if collisionCount != nil {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisionCount))
		h.Write(b[:])
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// constructHistory claims the DaemonSet's revisions, tells the current
// one (matching the template) from the old ones, creates the current one
// if there is none, and renumbers it if an old template became current
// again (Kubernetes' constructHistory). It also labels revisions of old
// controllers that lack the hash label with their name, and keeps only
// one current revision.
func (c *Controller) constructHistory(ctx context.Context, ds *appsv1.DaemonSet) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, nil, err
	}
	revs, err := c.history.Claim(ctx, ds, controllerKind, sel, c.canAdopt(ds))
	if err != nil {
		return nil, nil, err
	}
	var current []*appsv1.ControllerRevision
	for _, rev := range revs {
		if _, ok := rev.Labels[hashLabel]; !ok {
			// The name's suffix is the hash it was made with; using the
			// name avoids recomputing it (and any collision).
			next := rev.DeepCopy()
			if next.Labels == nil {
				next.Labels = map[string]string{}
			}
			next.Labels[hashLabel] = next.Name
			rev = &appsv1.ControllerRevision{}
			if err := c.client.Update(ctx, client.ControllerRevisions, next.Namespace, next.Name, next, rev); err != nil {
				return nil, nil, fmt.Errorf("label controller revision %s: %w", next.Name, err)
			}
		}
		ok, err := matches(ds, rev)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			current = append(current, rev)
		} else {
			old = append(old, rev)
		}
	}
	next := history.MaxRevision(old) + 1
	if len(current) == 0 {
		cur, err = c.snapshot(ctx, ds, next)
		return cur, old, err
	}
	if cur, err = c.dedupCurrent(ctx, ds, current); err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		c.log.Info("an old template is current again, renumbering its revision", "daemonset", client.KeyOf(ds), "revision", cur.Name, "from", cur.Revision, "to", next)
		if cur, err = c.history.UpdateRevision(ctx, cur, next); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

// snapshot creates the revision of ds's current template. A revision of
// that name with other data is a hash collision: the DaemonSet's
// status.collisionCount goes up by one (which changes the names it
// hashes) and the sync is retried (Kubernetes' snapshot).
func (c *Controller) snapshot(ctx context.Context, ds *appsv1.DaemonSet, revision int64) (*appsv1.ControllerRevision, error) {
	patch, err := templatePatch(ds)
	if err != nil {
		return nil, err
	}
	hash := templateHash(&ds.Spec.Template, ds.Status.CollisionCount)
	labels := maps.Clone(ds.Spec.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[hashLabel] = hash
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: history.Name(ds.Name, hash), Namespace: ds.Namespace, Labels: labels, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}
	created := &appsv1.ControllerRevision{}
	err = c.client.Create(ctx, client.ControllerRevisions, ds.Namespace, rev, created)
	if err == nil {
		c.log.Info("recorded the template as a new revision", "daemonset", client.KeyOf(ds), "revision", created.Name, "number", revision)
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create controller revision %s: %w", rev.Name, err)
	}
	existing := &appsv1.ControllerRevision{}
	if err := c.client.Get(ctx, client.ControllerRevisions, ds.Namespace, rev.Name, existing); err != nil {
		return nil, err
	}
	if ok, err := matches(ds, existing); err != nil || ok {
		return existing, err // our own, made by an earlier sync the cache has not shown yet
	}
	fresh := &appsv1.DaemonSet{}
	if err := c.client.Get(ctx, client.DaemonSets, ds.Namespace, ds.Name, fresh); err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count of DaemonSet %s; will retry until it is updated", client.KeyOf(ds))
	}
	count := int32(0)
	if fresh.Status.CollisionCount != nil {
		count = *fresh.Status.CollisionCount
	}
	count++
	fresh.Status.CollisionCount = &count
	if err := c.client.UpdateStatus(ctx, client.DaemonSets, ds.Namespace, ds.Name, fresh, nil); err != nil {
		return nil, err
	}
	c.log.Info("hash collision, bumping collisionCount", "daemonset", client.KeyOf(ds), "revision", rev.Name, "collisionCount", count)
	return nil, fmt.Errorf("controller revision %s: hash collision, collisionCount now %d: %w", rev.Name, count, err)
}

// dedupCurrent keeps one of several revisions of the current template
// (the highest numbered), relabels the pods of the others with its hash,
// and deletes the others.
func (c *Controller) dedupCurrent(ctx context.Context, ds *appsv1.DaemonSet, current []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if len(current) == 1 {
		return current[0], nil
	}
	keep := current[0]
	for _, rev := range current {
		if rev.Revision >= keep.Revision {
			keep = rev
		}
	}
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	hash := keep.Labels[hashLabel]
	for _, pod := range pods {
		if pod.Labels[hashLabel] == hash {
			continue
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{hashLabel: hash}}})
		if err := c.client.Patch(ctx, client.Pods, pod.Namespace, pod.Name, types.MergePatchType, patch, nil); err != nil {
			return nil, fmt.Errorf("relabel pod %s: %w", client.KeyOf(pod), err)
		}
	}
	for _, rev := range current {
		if rev.Name != keep.Name {
			if err := c.history.Delete(ctx, rev); err != nil {
				return nil, err
			}
		}
	}
	return keep, nil
}

// cleanupHistory deletes the oldest revisions beyond
// spec.revisionHistoryLimit, except those some pod still runs (their
// hash is a live pod's label, terminal pods included): those are still
// history in use.
func (c *Controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision) error {
	toKill := len(old) - int(ptr.Deref(ds.Spec.RevisionHistoryLimit, 10)) // defaulted; 10 for one stored before
	if toKill <= 0 {
		return nil
	}
	byNode, err := c.nodesToDaemonPods(ctx, ds, true)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, pods := range byNode {
		for _, pod := range pods {
			if h := pod.Labels[hashLabel]; h != "" {
				live[h] = true
			}
		}
	}
	old = append([]*appsv1.ControllerRevision(nil), old...)
	history.Sort(old)
	for _, rev := range old {
		if toKill == 0 {
			break
		}
		if live[rev.Labels[hashLabel]] {
			continue
		}
		if err := c.history.Delete(ctx, rev); err != nil {
			return err
		}
		c.log.Info("deleted old revision beyond revisionHistoryLimit", "daemonset", client.KeyOf(ds), "revision", rev.Name, "number", rev.Revision)
		toKill--
	}
	return nil
}
