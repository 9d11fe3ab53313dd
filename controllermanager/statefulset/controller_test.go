package statefulset_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/statefulset"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/testserver"
)

// These tests run the StatefulSet controller and the garbage collector
// against a real API server (embedded etcd, HTTP). No scheduler or kubelet
// runs: fakeKubelet reports every new pod Running and Ready, unless the
// test holds it back, and history records, from watches, the order in
// which claims and pods came, became ready and went.

var ctx = context.Background()

// history is the order of what the watches saw: "pvc www-web-0",
// "pod web-0", "ready web-0", "gone web-2".
type history struct {
	mu  sync.Mutex
	log []string
}

func (h *history) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

func (h *history) lastIndex(s string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, v := range slices.Backward(h.log) {
		if v == s {
			return i
		}
	}
	return -1
}

func (h *history) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.log, ", ")
}

// before checks that a was seen, and (the last time) before b was (the
// last time).
func (h *history) before(t *testing.T, a, b string) {
	t.Helper()
	if i, j := h.lastIndex(a), h.lastIndex(b); i < 0 || j < 0 || i > j {
		t.Errorf("want %q before %q; saw %s", a, b, h)
	}
}

// cluster is an API server with the StatefulSet controller, the garbage
// collector, a fake kubelet and the history of a watch.
type cluster struct {
	c    *client.Client
	hist *history
	hold sync.Map // pod name → true: the fake kubelet leaves it Pending
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	cl := &cluster{c: client.New(testserver.Start(t), "statefulset-test"), hist: &history{}}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	d := controller.NewDeps(cl.c, log, nil)
	ctrl := statefulset.New(d, statefulset.Options{Workers: 2})
	gc := garbagecollector.New(d, garbagecollector.Options{Workers: 2})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)
	testserver.Background(t, gc.Run)

	pods := client.NewInformer(cl.c, client.Pods, "default", client.ListOptions{}, slog.New(slog.DiscardHandler))
	pods.AddHandler(client.Handler{
		OnAdd: func(obj runtime.Object) {
			cl.hist.add("pod " + obj.(*corev1.Pod).Name)
			cl.kubelet(t, obj.(*corev1.Pod))
		},
		OnUpdate: func(old, obj runtime.Object) {
			if !podcondition.IsReady(old.(*corev1.Pod)) && podcondition.IsReady(obj.(*corev1.Pod)) {
				cl.hist.add("ready " + obj.(*corev1.Pod).Name)
			}
			cl.kubelet(t, obj.(*corev1.Pod))
		},
		OnDelete: func(obj runtime.Object) { cl.hist.add("gone " + obj.(*corev1.Pod).Name) },
	})
	claims := client.NewInformer(cl.c, client.PersistentVolumeClaims, "default", client.ListOptions{}, slog.New(slog.DiscardHandler))
	claims.AddHandler(client.Handler{OnAdd: func(obj runtime.Object) { cl.hist.add("pvc " + obj.(*corev1.PersistentVolumeClaim).Name) }})
	testserver.Background(t, pods.Run)
	testserver.Background(t, claims.Run)
	if !client.WaitForSync(ctx, pods, claims) {
		t.Fatal("watches did not sync")
	}
	return cl
}

// kubelet reports a new pod Running and Ready, as a node would once its
// containers start, unless the test holds the pod.
func (cl *cluster) kubelet(t *testing.T, p *corev1.Pod) {
	if _, held := cl.hold.Load(p.Name); held || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
		return
	}
	next := p.DeepCopy()
	next.Status.Phase = corev1.PodRunning
	next.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if err := cl.c.UpdateStatus(ctx, client.Pods, p.Namespace, p.Name, next, nil); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		t.Errorf("report pod %s ready: %v", p.Name, err)
	}
}

// release lets the fake kubelet start a held pod.
func (cl *cluster) release(t *testing.T, name string) {
	cl.hold.Delete(name)
	pod := &corev1.Pod{}
	if err := cl.c.Get(ctx, client.Pods, "default", name, pod); err == nil {
		cl.kubelet(t, pod)
	}
}

func newWeb(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: "nginx",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25",
					VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}}}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}},
		},
	}
}

// state is the set and its pods by name, from the server.
func (cl *cluster) state(t *testing.T) (*appsv1.StatefulSet, map[string]*corev1.Pod) {
	t.Helper()
	set := &appsv1.StatefulSet{}
	if err := cl.c.Get(ctx, client.StatefulSets, "default", "web", set); err != nil {
		t.Fatal(err)
	}
	var list corev1.PodList
	if err := cl.c.List(ctx, client.Pods, "default", client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].Name] = &list.Items[i]
	}
	return set, pods
}

// waitSettled waits until the set has n ready pods, every one at the
// revision the status says it should be at, and the status says so.
func (cl *cluster) waitSettled(t *testing.T, n int32, what string) (*appsv1.StatefulSet, map[string]*corev1.Pod) {
	t.Helper()
	var set *appsv1.StatefulSet
	var pods map[string]*corev1.Pod
	testserver.Eventually(t, what, func() (bool, string) {
		set, pods = cl.state(t)
		st := set.Status
		ok := st.ObservedGeneration == set.Generation && st.Replicas == n && st.ReadyReplicas == n && len(pods) == int(n)
		for _, p := range pods {
			ok = ok && podcondition.IsReady(p) && p.DeletionTimestamp == nil
		}
		return ok, fmt.Sprintf("status %+v, %d pods; seen %s", st, len(pods), cl.hist)
	})
	return set, pods
}

func revisionOf(p *corev1.Pod) string { return p.Labels[appsv1.StatefulSetRevisionLabel] }

func (cl *cluster) revisions(t *testing.T) map[string]int64 {
	t.Helper()
	var list appsv1.ControllerRevisionList
	if err := cl.c.List(ctx, client.ControllerRevisions, "default", client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range list.Items {
		out[r.Name] = r.Revision
	}
	return out
}

func (cl *cluster) patch(t *testing.T, pt types.PatchType, patch string) {
	t.Helper()
	if err := cl.c.Patch(ctx, client.StatefulSets, "default", "web", pt, []byte(patch), nil); err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
}

func TestOrderedReadySetCreatesClaimsAndPodsOneOrdinalAtATime(t *testing.T) {
	cl := startCluster(t)
	if err := cl.c.Create(ctx, client.StatefulSets, "default", newWeb(3), nil); err != nil {
		t.Fatal(err)
	}
	set, pods := cl.waitSettled(t, 3, "three ready pods")
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		cl.hist.before(t, "pvc www-"+name, "pod "+name) // the claim first
		if i > 0 {
			cl.hist.before(t, fmt.Sprintf("ready web-%d", i-1), "pod "+name) // the predecessor Ready first
		}
		p := pods[name]
		if p.Spec.Hostname != name || p.Spec.Subdomain != "nginx" || p.Labels[appsv1.PodIndexLabel] != fmt.Sprint(i) ||
			p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "www-"+name || revisionOf(p) != set.Status.UpdateRevision {
			t.Errorf("%s: hostname %q subdomain %q labels %v volumes %v; want its identity at %s", name, p.Spec.Hostname,
				p.Spec.Subdomain, p.Labels, p.Spec.Volumes, set.Status.UpdateRevision)
		}
	}
	if st := set.Status; st.CurrentRevision == "" || st.CurrentRevision != st.UpdateRevision || st.CurrentReplicas != 3 ||
		st.UpdatedReplicas != 3 || st.AvailableReplicas != 3 || st.CollisionCount == nil {
		t.Errorf("status %+v: want 3 current, updated and available pods of one revision", st)
	}
	if revs := cl.revisions(t); len(revs) != 1 || revs[set.Status.CurrentRevision] != 1 {
		t.Errorf("revisions %v, want %s as revision 1", revs, set.Status.CurrentRevision)
	}

	// A failed pod is replaced by a pod of the same name and claim.
	failed := pods["web-1"].DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	if err := cl.c.UpdateStatus(ctx, client.Pods, "default", "web-1", failed, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "web-1 replaced", func() (bool, string) {
		_, pods := cl.state(t)
		p := pods["web-1"]
		return p != nil && p.UID != failed.UID && podcondition.IsReady(p), cl.hist.String()
	})

	// Scale down: the highest ordinal goes first, and the claims stay.
	cl.patch(t, types.MergePatchType, `{"spec":{"replicas":1}}`)
	cl.waitSettled(t, 1, "scaled down to web-0")
	cl.hist.before(t, "gone web-2", "gone web-1")
	var claims corev1.PersistentVolumeClaimList
	if err := cl.c.List(ctx, client.PersistentVolumeClaims, "default", client.ListOptions{}, &claims); err != nil || len(claims.Items) != 3 {
		t.Errorf("claims after scale-down: %d (%v), want the 3 retained", len(claims.Items), err)
	}
	// Scale up again: web-1 mounts the claim it had.
	cl.patch(t, types.MergePatchType, `{"spec":{"replicas":2}}`)
	_, pods = cl.waitSettled(t, 2, "scaled up to web-1")
	if got := pods["web-1"].Spec.Volumes[0].PersistentVolumeClaim.ClaimName; got != "www-web-1" {
		t.Errorf("web-1 mounts %s, want www-web-1 again", got)
	}
}

func TestParallelSetCreatesEveryPodWithoutWaiting(t *testing.T) {
	cl := startCluster(t)
	for i := range 3 {
		cl.hold.Store(fmt.Sprintf("web-%d", i), true)
	}
	web := newWeb(3)
	web.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	if err := cl.c.Create(ctx, client.StatefulSets, "default", web, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "three pods, none ready", func() (bool, string) {
		set, pods := cl.state(t)
		return len(pods) == 3 && set.Status.Replicas == 3 && set.Status.ReadyReplicas == 0, cl.hist.String()
	})
	for i := range 3 {
		cl.release(t, fmt.Sprintf("web-%d", i))
	}
	cl.waitSettled(t, 3, "three ready pods")
}

func TestRollingUpdateWithAPartitionThenRollback(t *testing.T) {
	cl := startCluster(t)
	if err := cl.c.Create(ctx, client.StatefulSets, "default", newWeb(3), nil); err != nil {
		t.Fatal(err)
	}
	set, _ := cl.waitSettled(t, 3, "three ready pods")
	first := set.Status.CurrentRevision
	// kubectl rollout undo applies this very data to the set.
	var firstData []byte
	{
		rev := &appsv1.ControllerRevision{}
		if err := cl.c.Get(ctx, client.ControllerRevisions, "default", first, rev); err != nil {
			t.Fatal(err)
		}
		firstData = rev.Data.Raw
	}

	// A canary: partition 2 updates web-2 only.
	cl.patch(t, types.MergePatchType, `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}},
		"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}`)
	var second string
	testserver.Eventually(t, "web-2 updated, web-0 and web-1 not", func() (bool, string) {
		set, pods := cl.state(t)
		second = set.Status.UpdateRevision
		ok := second != first && set.Status.UpdatedReplicas == 1 && set.Status.CurrentRevision == first && len(pods) == 3 &&
			revisionOf(pods["web-2"]) == second && pods["web-2"].Spec.Containers[0].Image == "nginx:1.26" && podcondition.IsReady(pods["web-2"]) &&
			revisionOf(pods["web-1"]) == first && revisionOf(pods["web-0"]) == first
		return ok, fmt.Sprintf("status %+v; seen %s", set.Status, cl.hist)
	})

	// The rest of the rollout, from the highest ordinal down.
	cl.patch(t, types.MergePatchType, `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)
	testserver.Eventually(t, "every pod updated, the rollout complete", func() (bool, string) {
		set, pods := cl.state(t)
		ok := set.Status.CurrentRevision == second && set.Status.UpdateRevision == second && set.Status.UpdatedReplicas == 3 && len(pods) == 3
		for _, p := range pods {
			ok = ok && revisionOf(p) == second && podcondition.IsReady(p)
		}
		return ok, fmt.Sprintf("status %+v; seen %s", set.Status, cl.hist)
	})
	cl.hist.before(t, "gone web-1", "gone web-0")
	if revs := cl.revisions(t); len(revs) != 2 || revs[first] != 1 || revs[second] != 2 {
		t.Errorf("revisions %v, want %s=1 and %s=2", revs, first, second)
	}

	// Rollback: the first template again, as kubectl rollout undo patches
	// it. The old revision is renumbered newest; no third is made.
	cl.patch(t, types.StrategicMergePatchType, string(firstData))
	testserver.Eventually(t, "rolled back to the first revision", func() (bool, string) {
		set, pods := cl.state(t)
		ok := set.Status.CurrentRevision == first && set.Status.UpdateRevision == first && len(pods) == 3
		for _, p := range pods {
			ok = ok && revisionOf(p) == first && p.Spec.Containers[0].Image == "nginx:1.25" && podcondition.IsReady(p)
		}
		return ok, fmt.Sprintf("status %+v; seen %s", set.Status, cl.hist)
	})
	if revs := cl.revisions(t); len(revs) != 2 || revs[first] != 3 || revs[second] != 2 {
		t.Errorf("revisions after rollback %v, want %s=3 and %s=2", revs, first, second)
	}

	// History beyond revisionHistoryLimit goes: with a limit of 0 only
	// the live revision stays.
	cl.patch(t, types.MergePatchType, `{"spec":{"revisionHistoryLimit":0}}`)
	testserver.Eventually(t, "old revisions deleted", func() (bool, string) {
		revs := cl.revisions(t)
		return len(revs) == 1 && revs[first] == 3, fmt.Sprint(revs)
	})
}

func TestSetAdoptsAndReleasesPodsAndIsDeletedWithThem(t *testing.T) {
	cl := startCluster(t)
	// An orphan with the set's labels and one of its names is adopted.
	// (It mounts the claim web-0 would: a pod's volumes cannot change.)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Labels: map[string]string{"app": "nginx"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25"}},
			Volumes: []corev1.Volume{{Name: "www", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "www-web-0"}}}}}}
	if err := cl.c.Create(ctx, client.Pods, "default", orphan, orphan); err != nil {
		t.Fatal(err)
	}
	web := newWeb(1)
	// OnDelete: the orphan, made from no revision, is kept, not rolled.
	web.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	web.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
	if err := cl.c.Create(ctx, client.StatefulSets, "default", web, web); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the orphan adopted", func() (bool, string) {
		_, pods := cl.state(t)
		p := pods["web-0"]
		return p != nil && p.UID == orphan.UID && metav1.IsControlledBy(p, web), fmt.Sprint(p.OwnerReferences)
	})
	// The set restores the identity labels an adopted pod lacks.
	testserver.Eventually(t, "the adopted pod labelled as web-0", func() (bool, string) {
		_, pods := cl.state(t)
		p := pods["web-0"]
		return p != nil && p.UID == orphan.UID && p.Labels[appsv1.StatefulSetPodNameLabel] == "web-0", fmt.Sprint(p)
	})

	// Relabelled out of the selector, it is released.
	if err := cl.c.Patch(ctx, client.Pods, "default", "web-0", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"other"}}}`), nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the pod released", func() (bool, string) {
		_, pods := cl.state(t)
		p := pods["web-0"]
		return p != nil && metav1.GetControllerOf(p) == nil, fmt.Sprint(p)
	})
	if err := cl.c.Delete(ctx, client.Pods, "default", "web-0", nil); err != nil {
		t.Fatal(err)
	}
	cl.waitSettled(t, 1, "a new web-0")

	// With whenDeleted=Delete the claim is owned by the set, and the set's
	// deletion takes the pod and the claim with it.
	testserver.Eventually(t, "the claim owned by the set", func() (bool, string) {
		claim := &corev1.PersistentVolumeClaim{}
		if err := cl.c.Get(ctx, client.PersistentVolumeClaims, "default", "www-web-0", claim); err != nil {
			return false, err.Error()
		}
		return metav1.IsControlledBy(claim, web), fmt.Sprint(claim.OwnerReferences)
	})
	if err := cl.c.Delete(ctx, client.StatefulSets, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "pods and claim deleted with the set", func() (bool, string) {
		var pods corev1.PodList
		if err := cl.c.List(ctx, client.Pods, "default", client.ListOptions{}, &pods); err != nil {
			return false, err.Error()
		}
		claim := &corev1.PersistentVolumeClaim{}
		err := cl.c.Get(ctx, client.PersistentVolumeClaims, "default", "www-web-0", claim)
		gone := apierrors.IsNotFound(err) || (err == nil && claim.DeletionTimestamp != nil) // pvc-protection may hold it
		return len(pods.Items) == 0 && gone, fmt.Sprintf("%d pods, claim %v", len(pods.Items), err)
	})
}
