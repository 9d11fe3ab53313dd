package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/mkube/mkube/controllermanager/history"
)

// A StatefulSet's history is one ControllerRevision per pod template it
// has run. Two of them matter at any time:
//
//   - the update revision: the template in the spec now, what new and
//     replaced pods are made from (status.updateRevision);
//   - the current revision: the template the set ran before the rollout
//     in progress (status.currentRevision), what pods below the partition
//     keep being made from. It becomes the update revision once every pod
//     is updated and ready.
//
// Each pod's controller-revision-hash label names the revision it was made
// from. A revision's data is the strategic merge patch that puts its
// template back into a set, {"spec":{"template":{...,"$patch":"replace"}}}:
// `kubectl rollout undo` applies it to the StatefulSet as it is.

// revisionData is the patch that restores set's template (Kubernetes'
// getPatch). The template is marshalled through a map, so its keys are
// sorted and equal templates give equal bytes.
func revisionData(set *appsv1.StatefulSet) ([]byte, error) {
	raw, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return nil, err
	}
	var template map[string]any
	if err := json.Unmarshal(raw, &template); err != nil {
		return nil, err
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// newRevision is the revision of set's template, numbered revision: owned
// by the set, labelled with the template's labels, annotated with the
// set's annotations (kubernetes.io/change-cause is what `kubectl rollout
// history` prints).
func newRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	data, err := revisionData(set)
	if err != nil {
		return nil, fmt.Errorf("revision data of %s/%s: %w", set.Namespace, set.Name, err)
	}
	rev := history.New(set, controllerKind, set.Spec.Template.Labels, runtime.RawExtension{Raw: data}, revision, collisionCount)
	if len(set.Annotations) > 0 {
		rev.Annotations = maps.Clone(set.Annotations)
	}
	return rev, nil
}

// applyRevision is set with the revision's template (Kubernetes'
// ApplyRevision): the revision's patch applied to a copy of the set.
func applyRevision(set *appsv1.StatefulSet, rev *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	original, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, rev.Data.Raw, &appsv1.StatefulSet{})
	if err != nil {
		return nil, fmt.Errorf("apply revision %s: %w", rev.Name, err)
	}
	restored := &appsv1.StatefulSet{}
	if err := json.Unmarshal(patched, restored); err != nil {
		return nil, fmt.Errorf("apply revision %s: %w", rev.Name, err)
	}
	out := set.DeepCopy()
	out.Spec = restored.Spec
	return out, nil
}

// revisionsOf finds (or records) the set's current and update revisions,
// as Kubernetes' getStatefulSetRevisions, from its revisions sorted oldest
// first. The update revision is the spec's template:
//
//   - recorded by the newest revision: that one (nothing changed);
//   - recorded by an older one: that one, renumbered newest (a rollback,
//     `kubectl rollout undo`, brings an old template back with its old
//     name, so the pods still labelled with it count as updated);
//   - not recorded: a new revision, numbered newest+1, named after its
//     hash, which a collision with another template's name changes
//     (collisionCount, returned to be stored in status).
//
// The current revision is the one status.currentRevision names, or, for
// a new set, the update revision.
func (c *Controller) revisionsOf(ctx context.Context, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision) (
	current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	update, err = newRevision(set, history.MaxRevision(revs)+1, &collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	equal := history.FindEqual(revs, update)
	switch {
	case len(equal) > 0 && history.Equal(revs[len(revs)-1], equal[len(equal)-1]):
		update = revs[len(revs)-1]
	case len(equal) > 0:
		old := equal[len(equal)-1]
		c.log.Info("template is an earlier revision's: renumbering it newest", "statefulset", keyOf(set),
			"revision", old.Name, "from", old.Revision, "to", update.Revision)
		if update, err = c.history.UpdateRevision(ctx, old, update.Revision); err != nil {
			return nil, nil, collisionCount, err
		}
	case len(revs) > 0 && sameTemplate(set, revs[len(revs)-1]):
		// Same template, other bytes (written by another version of the
		// encoder): Kubernetes' StatefulSetSemanticRevisionComparison.
		update = revs[len(revs)-1]
	default:
		if update, err = c.history.Create(ctx, set, update, &collisionCount); err != nil {
			return nil, nil, collisionCount, err
		}
		c.log.Info("recorded the template as a new revision", "statefulset", keyOf(set), "revision", update.Name, "number", update.Revision)
	}
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update // a new set: its first template is current
	}
	return current, update, collisionCount, nil
}

// sameTemplate: the revision, applied, gives the set's own template.
func sameTemplate(set *appsv1.StatefulSet, rev *appsv1.ControllerRevision) bool {
	restored, err := applyRevision(set, rev)
	return err == nil && equality.Semantic.DeepEqual(restored.Spec.Template, set.Spec.Template)
}

// truncateHistory deletes the oldest revisions no pod and neither the
// current nor the update revision uses, until at most
// spec.revisionHistoryLimit such revisions remain (a negative limit keeps
// them all). revs is sorted oldest first.
func (c *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod,
	revs []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	for _, r := range []*appsv1.ControllerRevision{current, update} {
		if r != nil {
			live[r.Name] = true
		}
	}
	for _, p := range pods {
		live[revisionOf(p)] = true
	}
	var old []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	if limit < 0 || len(old) <= limit {
		return nil
	}
	for _, r := range old[:len(old)-limit] {
		if err := c.history.Delete(ctx, r); err != nil {
			return err
		}
		c.log.Info("deleted an old revision beyond revisionHistoryLimit", "statefulset", keyOf(set), "revision", r.Name, "limit", limit)
	}
	return nil
}
