package history_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/history"
	"github.com/mkube/mkube/internal/testserver"
)

// These tests keep a history on a real API server, as the controllers do.

var dsKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

type fixture struct {
	c       *client.Client
	h       *history.History
	revs    *client.Informer
	parent  *appsv1.DaemonSet
	canAdpt func(context.Context) error
}

func setup(t *testing.T) *fixture {
	t.Helper()
	c := client.New(testserver.Start(t), "history-test")
	ctx := context.Background()
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}}}
	ds.Spec.Template.Labels = map[string]string{"app": "agent"}
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "a", Image: "busybox"}}
	if err := c.Create(ctx, client.DaemonSets, "default", ds, ds); err != nil {
		t.Fatal(err)
	}
	revs := client.NewInformer(c, client.ControllerRevisions, "", client.ListOptions{}, slog.New(slog.DiscardHandler))
	f := &fixture{c: c, h: history.NewHistory(c, revs), revs: revs, parent: ds, canAdpt: func(context.Context) error { return nil }}
	testserver.Background(t, revs.Run)
	return f
}

// waitCached waits until the informer holds n revisions that satisfy ok.
func (f *fixture) waitCached(t *testing.T, n int, ok func(*appsv1.ControllerRevision) bool) {
	t.Helper()
	testserver.Eventually(t, "the informer sees the revisions", func() (bool, string) {
		objs := f.revs.Cache().List()
		if len(objs) != n {
			return false, "wrong count"
		}
		for _, o := range objs {
			if !ok(o.(*appsv1.ControllerRevision)) {
				return false, "not yet updated"
			}
		}
		return true, ""
	})
}

func data(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

func TestCreateRenamesOnAHashCollisionAndBumpsTheCount(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	var collisions int32
	want := history.New(f.parent, dsKind, f.parent.Spec.Template.Labels, data(`{"v":2}`), 2, &collisions)
	// Somebody else's revision already has the name ours hashes to.
	squatter := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: want.Name}, Data: data(`{"v":1}`), Revision: 1}
	if err := f.c.Create(ctx, client.ControllerRevisions, "default", squatter, squatter); err != nil {
		t.Fatal(err)
	}
	got, err := f.h.Create(ctx, f.parent, want, &collisions)
	if err != nil {
		t.Fatal(err)
	}
	if collisions != 1 {
		t.Errorf("collisionCount = %d, want 1", collisions)
	}
	if wantName := history.Name("agent", history.Hash(want, ptr.To[int32](1))); got.Name != wantName || got.Labels[history.HashLabel] != history.Hash(want, ptr.To[int32](1)) {
		t.Errorf("created %s labelled %v, want %s and its hash", got.Name, got.Labels, wantName)
	}
	// Creating the same data again finds our own revision: no new count.
	again, err := f.h.Create(ctx, f.parent, want, &collisions)
	if err != nil || again.UID != got.UID || collisions != 1 {
		t.Errorf("second create: %v %v, count %d; want the first revision and the count unchanged", again, err, collisions)
	}
}

func TestClaimAdoptsMatchingOrphansAndReleasesRevisionsThatNoLongerMatch(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	orphan := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "agent"}}, Data: data(`{}`), Revision: 1}
	stranger := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Labels: map[string]string{"app": "other"}}, Data: data(`{}`), Revision: 1}
	strayed := history.New(f.parent, dsKind, map[string]string{"app": "moved"}, data(`{"s":1}`), 2, nil)
	for _, r := range []*appsv1.ControllerRevision{orphan, stranger, strayed} {
		if err := f.c.Create(ctx, client.ControllerRevisions, "default", r, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.waitCached(t, 3, func(*appsv1.ControllerRevision) bool { return true })

	sel := labels.SelectorFromSet(labels.Set{"app": "agent"})
	owned, err := f.h.Claim(ctx, f.parent, dsKind, sel, f.canAdpt)
	if err != nil {
		t.Fatal(err)
	}
	if len(owned) != 1 || owned[0].Name != "orphan" || !metav1.IsControlledBy(owned[0], f.parent) {
		t.Fatalf("owned %v, want the adopted orphan only", owned)
	}
	got := &appsv1.ControllerRevision{}
	if err := f.c.Get(ctx, client.ControllerRevisions, "default", strayed.Name, got); err != nil {
		t.Fatal(err)
	}
	if metav1.GetControllerOf(got) != nil {
		t.Errorf("the revision whose labels no longer match is still owned: %v", got.OwnerReferences)
	}
	if err := f.c.Get(ctx, client.ControllerRevisions, "default", "stranger", got); err != nil || len(got.OwnerReferences) != 0 {
		t.Errorf("a revision the selector does not match was touched: %v %v", got.OwnerReferences, err)
	}

	// A parent that may not adopt (being deleted, on a fresh read) fails
	// the claim of a new orphan, and does not adopt it.
	f.waitCached(t, 3, func(r *appsv1.ControllerRevision) bool {
		return (r.Name == "orphan") == metav1.IsControlledBy(r, f.parent)
	})
	late := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "late", Labels: map[string]string{"app": "agent"}}, Data: data(`{}`), Revision: 1}
	if err := f.c.Create(ctx, client.ControllerRevisions, "default", late, nil); err != nil {
		t.Fatal(err)
	}
	f.waitCached(t, 4, func(*appsv1.ControllerRevision) bool { return true })
	if _, err := f.h.Claim(ctx, f.parent, dsKind, sel, func(context.Context) error { return errors.New("being deleted") }); err == nil {
		t.Error("claim succeeded although the parent may not adopt")
	}
	if err := f.c.Get(ctx, client.ControllerRevisions, "default", "late", got); err != nil || len(got.OwnerReferences) != 0 {
		t.Errorf("an orphan was adopted although the parent may not adopt: %v %v", got.OwnerReferences, err)
	}
}

func TestUpdateRevisionRenumbersAndDeleteToleratesAGoneRevision(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	var cc int32
	rev, err := f.h.Create(ctx, f.parent, history.New(f.parent, dsKind, nil, data(`{"v":1}`), 1, nil), &cc)
	if err != nil {
		t.Fatal(err)
	}
	stale := rev.DeepCopy()
	if _, err := f.h.UpdateRevision(ctx, rev, 5); err != nil {
		t.Fatal(err)
	}
	// A stale copy conflicts, is re-read and renumbered.
	out, err := f.h.UpdateRevision(ctx, stale, 6)
	if err != nil || out.Revision != 6 {
		t.Fatalf("update from a stale copy: %v, revision %d; want 6", err, out.Revision)
	}
	if err := f.h.Delete(ctx, out); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Delete(ctx, out); err != nil {
		t.Errorf("deleting a revision already gone: %v, want no error", err)
	}
}
