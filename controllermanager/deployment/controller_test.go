package deployment_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/internal/testserver"
)

// This file runs the whole controller manager (Deployment, ReplicaSet and
// garbage collector controllers on shared informers) against a real API
// server: embedded etcd, the apiserver package, HTTP. No scheduler or
// kubelet runs: the test plays the kubelet's last word itself and reports
// every pod Ready as soon as it exists (reportPodsReady), so that the
// ReplicaSet controller counts it available and a rolling update can take
// its next step.

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startAPIServer runs an API server for one test and returns a client of it.
func startAPIServer(t *testing.T) *client.Client {
	return client.New(testserver.Start(t), "deployment-test")
}

// revisions records, from a watch, every value the revision annotation of
// the Deployment and of each of its ReplicaSets ever had, in order. A watch
// sees every write, so a value that was set and then overwritten between
// two polls of the test is still in the history.
type revisions struct {
	mu          sync.Mutex
	deployment  []string            // the Deployment's revision annotation, each change
	replicaSets map[string][]string // by ReplicaSet name
}

func watchRevisions(t *testing.T, c *client.Client) *revisions {
	r := &revisions{replicaSets: map[string][]string{}}
	note := func(hist []string, obj runtime.Object) []string {
		m := obj.(metav1.Object)
		rev := m.GetAnnotations()["deployment.kubernetes.io/revision"]
		if rev == "" || (len(hist) > 0 && hist[len(hist)-1] == rev) {
			return hist
		}
		return append(hist, rev)
	}
	deploys := client.NewInformer(c, client.Deployments, "default", client.ListOptions{}, discard())
	deploys.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { r.mu.Lock(); r.deployment = note(r.deployment, obj); r.mu.Unlock() },
		OnUpdate: func(_, obj runtime.Object) { r.mu.Lock(); r.deployment = note(r.deployment, obj); r.mu.Unlock() },
	})
	rsets := client.NewInformer(c, client.ReplicaSets, "default", client.ListOptions{}, discard())
	onRS := func(obj runtime.Object) {
		r.mu.Lock()
		defer r.mu.Unlock()
		name := obj.(*appsv1.ReplicaSet).Name
		r.replicaSets[name] = note(r.replicaSets[name], obj)
	}
	rsets.AddHandler(client.Handler{OnAdd: onRS, OnUpdate: func(_, obj runtime.Object) { onRS(obj) }})
	testserver.Background(t, deploys.Run)
	testserver.Background(t, rsets.Run)
	if !client.WaitForSync(context.Background(), deploys, rsets) {
		t.Fatal("revision watch did not sync")
	}
	return r
}

// snapshot copies the histories seen so far.
func (r *revisions) snapshot() (deployment []string, replicaSets map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	replicaSets = map[string][]string{}
	for name, h := range r.replicaSets {
		replicaSets[name] = slices.Clone(h)
	}
	return slices.Clone(r.deployment), replicaSets
}

// rollout is what the server says about the Deployment "web", the
// ReplicaSets it controls and their pods.
type rollout struct {
	d     *appsv1.Deployment
	rsets map[string]*appsv1.ReplicaSet // controlled by the Deployment, by name
	pods  map[string][]*corev1.Pod      // active pods, by the name of the ReplicaSet controlling them
}

func read(t *testing.T, c *client.Client) rollout {
	t.Helper()
	ctx := context.Background()
	r := rollout{d: &appsv1.Deployment{}, rsets: map[string]*appsv1.ReplicaSet{}, pods: map[string][]*corev1.Pod{}}
	if err := c.Get(ctx, client.Deployments, "default", "web", r.d); err != nil {
		t.Fatal(err)
	}
	var rsets appsv1.ReplicaSetList
	if err := c.List(ctx, client.ReplicaSets, "default", client.ListOptions{}, &rsets); err != nil {
		t.Fatal(err)
	}
	byUID := map[types.UID]string{}
	for i := range rsets.Items {
		rs := &rsets.Items[i]
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == r.d.UID {
			r.rsets[rs.Name] = rs
			byUID[rs.UID] = rs.Name
		}
	}
	var pods corev1.PodList
	if err := c.List(ctx, client.Pods, "default", client.ListOptions{}, &pods); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil && byUID[ref.UID] != "" && p.DeletionTimestamp == nil {
			r.pods[byUID[ref.UID]] = append(r.pods[byUID[ref.UID]], p)
		}
	}
	return r
}

func (r rollout) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deployment: generation=%d observedGeneration=%d replicas=%d/%d updated=%d revision=%q; replicasets:",
		r.d.Generation, r.d.Status.ObservedGeneration, r.d.Status.Replicas, *r.d.Spec.Replicas, r.d.Status.UpdatedReplicas,
		r.d.Annotations["deployment.kubernetes.io/revision"])
	names := make([]string, 0, len(r.rsets))
	for name := range r.rsets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rs := r.rsets[name]
		fmt.Fprintf(&b, " %s(image=%s revision=%s replicas=%d status=%d pods=%d)", name, rs.Spec.Template.Spec.Containers[0].Image,
			rs.Annotations["deployment.kubernetes.io/revision"], *rs.Spec.Replicas, rs.Status.Replicas, len(r.pods[name]))
	}
	return b.String()
}

// running finds the ReplicaSet whose template runs image.
func (r rollout) running(image string) *appsv1.ReplicaSet {
	for _, rs := range r.rsets {
		if rs.Spec.Template.Spec.Containers[0].Image == image {
			return rs
		}
	}
	return nil
}

// settled: the ReplicaSet running image has the Deployment's replicas and
// pods, every other one is scaled to zero with no pods left, and both the
// ReplicaSets' and the Deployment's statuses describe their current spec.
func (r rollout) settled(image string) bool {
	want := *r.d.Spec.Replicas
	cur := r.running(image)
	if cur == nil || r.d.Status.ObservedGeneration != r.d.Generation || r.d.Status.Replicas != want || r.d.Status.UpdatedReplicas != want {
		return false
	}
	for name, rs := range r.rsets {
		n := int32(0)
		if rs == cur {
			n = want
		}
		if *rs.Spec.Replicas != n || rs.Status.Replicas != n || rs.Status.ObservedGeneration != rs.Generation || len(r.pods[name]) != int(n) {
			return false
		}
	}
	return true
}

func waitSettled(t *testing.T, c *client.Client, image, revision string, rsets int) rollout {
	t.Helper()
	var r rollout
	testserver.Eventually(t, fmt.Sprintf("the Deployment settles on %s as revision %s with %d ReplicaSets", image, revision, rsets), func() (bool, string) {
		r = read(t, c)
		ok := r.settled(image) && len(r.rsets) == rsets &&
			r.running(image).Annotations["deployment.kubernetes.io/revision"] == revision &&
			r.d.Annotations["deployment.kubernetes.io/revision"] == revision
		return ok, r.String()
	})
	return r
}

// reportPodsReady answers every new pod of the namespace default with a
// Running phase and a Ready condition, as a kubelet would once its
// containers started. A Conflict means a newer version of the pod exists,
// whose own event comes next.
func reportPodsReady(t *testing.T, c *client.Client) {
	pods := client.NewInformer(c, client.Pods, "default", client.ListOptions{}, discard())
	ready := func(obj runtime.Object) {
		p := obj.(*corev1.Pod)
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodRunning {
			return
		}
		next := p.DeepCopy()
		next.Status.Phase = corev1.PodRunning
		next.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		err := c.UpdateStatus(context.Background(), client.Pods, p.Namespace, p.Name, next, nil)
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			t.Errorf("report pod %s ready: %v", p.Name, err)
		}
	}
	pods.AddHandler(client.Handler{OnAdd: ready, OnUpdate: func(_, obj runtime.Object) { ready(obj) }})
	testserver.Background(t, pods.Run)
}

func setImage(t *testing.T, c *client.Client, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, image)
	if err := c.Patch(context.Background(), client.Deployments, "default", "web", types.MergePatchType, []byte(patch), nil); err != nil {
		t.Fatal(err)
	}
}

func TestDeploymentControllerAgainstARealAPIServer(t *testing.T) {
	c := startAPIServer(t)
	ctx := context.Background()
	revs := watchRevisions(t, c)
	reportPodsReady(t, c)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c, log, controllermanager.Options{ReplicaSet: replicaset.Options{Workers: 2}, Deployment: deployment.Options{Workers: 2},
			GarbageCollector: garbagecollector.Options{Workers: 2}})
	})

	replicas := int32(2)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if err := c.Create(ctx, client.Deployments, "default", d, d); err != nil {
		t.Fatal(err)
	}
	var first, second string // names of the ReplicaSets of nginx:1.27 and nginx:1.28

	t.Run("a new Deployment of 2 gets one ReplicaSet named after its template hash, and 2 pods", func(t *testing.T) {
		r := waitSettled(t, c, "nginx:1.27", "1", 1)
		rs := r.running("nginx:1.27")
		first = rs.Name
		hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if want := deployment.TemplateHash(&r.d.Spec.Template, nil); hash != want {
			t.Errorf("the ReplicaSet's pod-template-hash is %q, want the hash of the stored template %q", hash, want)
		}
		if rs.Name != "web-"+hash {
			t.Errorf("the ReplicaSet is called %q, want web-%s", rs.Name, hash)
		}
		withHash := map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: hash}
		for what, labels := range map[string]map[string]string{
			"selector": rs.Spec.Selector.MatchLabels, "template labels": rs.Spec.Template.Labels, "labels": rs.Labels,
		} {
			if !equalMaps(labels, withHash) {
				t.Errorf("the ReplicaSet's %s are %v, want %v", what, labels, withHash)
			}
		}
		ref := metav1.GetControllerOf(rs)
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != "web" || ref.UID != r.d.UID ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("the ReplicaSet's controller reference is %+v, want the Deployment web (uid %s), blocking its deletion", ref, r.d.UID)
		}
		for k, want := range map[string]string{
			"deployment.kubernetes.io/revision":         "1",
			"deployment.kubernetes.io/desired-replicas": "2",
			"deployment.kubernetes.io/max-replicas":     "3", // 2 + 25% of 2 rounded up
		} {
			if got := rs.Annotations[k]; got != want {
				t.Errorf("the ReplicaSet's annotation %s = %q, want %q", k, got, want)
			}
		}
		for _, p := range r.pods[rs.Name] {
			if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
				t.Errorf("pod %s has labels %v, want pod-template-hash=%s", p.Name, p.Labels, hash)
			}
		}
	})

	t.Run("a new template gets a second ReplicaSet as revision 2, and the first is scaled to 0 one pod at a time", func(t *testing.T) {
		setImage(t, c, "nginx:1.28")
		r := waitSettled(t, c, "nginx:1.28", "2", 2)
		rs := r.running("nginx:1.28")
		second = rs.Name
		if want := "web-" + deployment.TemplateHash(&r.d.Spec.Template, nil); rs.Name != want {
			t.Errorf("the new ReplicaSet is called %q, want %q", rs.Name, want)
		}
		if old := r.rsets[first]; old == nil || old.Annotations["deployment.kubernetes.io/revision"] != "1" {
			t.Errorf("the first ReplicaSet should stay as revision 1 in the history; now: %s", r)
		}
	})

	t.Run("going back to the first template reuses its ReplicaSet as revision 3", func(t *testing.T) {
		setImage(t, c, "nginx:1.27")
		r := waitSettled(t, c, "nginx:1.27", "3", 2)
		if cur := r.running("nginx:1.27"); cur.Name != first {
			t.Errorf("the template of %s runs in %s", first, cur.Name)
		}
		if old := r.rsets[second]; old == nil || old.Annotations["deployment.kubernetes.io/revision"] != "2" {
			t.Errorf("the second ReplicaSet should stay as revision 2; now: %s", r)
		}
		// Revisions only grow: `kubectl rollout history` must never see
		// an older number come back, on the Deployment or on a ReplicaSet.
		var deploy []string
		var rsets map[string][]string
		testserver.Eventually(t, "the revision watch sees revision 3", func() (bool, string) {
			deploy, rsets = revs.snapshot()
			h := rsets[first]
			return len(deploy) > 0 && deploy[len(deploy)-1] == "3" && len(h) > 0 && h[len(h)-1] == "3",
				fmt.Sprintf("deployment %v, replicasets %v", deploy, rsets)
		})
		for what, want := range map[string][]string{"the Deployment": {"1", "2", "3"}, first: {"1", "3"}, second: {"2"}} {
			got := deploy
			if what != "the Deployment" {
				got = rsets[what]
			}
			if !slices.Equal(got, want) {
				t.Errorf("the revision annotation of %s went %v, want %v", what, got, want)
			}
		}
		if len(rsets) != 2 {
			t.Errorf("ReplicaSets ever created: %v, want only %s and %s", rsets, first, second)
		}
	})

	t.Run("scaling the Deployment through its scale subresource resizes the current ReplicaSet", func(t *testing.T) {
		var scale autoscalingv1.Scale
		if err := c.Patch(ctx, client.Deployments, "default", "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), &scale, "scale"); err != nil {
			t.Fatal(err)
		}
		if scale.Spec.Replicas != 3 {
			t.Errorf("the scale subresource answered spec.replicas=%d, want 3", scale.Spec.Replicas)
		}
		r := waitSettled(t, c, "nginx:1.27", "3", 2)
		rs := r.rsets[first]
		if *r.d.Spec.Replicas != 3 || *rs.Spec.Replicas != 3 {
			t.Errorf("after scaling to 3: %s", r)
		}
		for k, want := range map[string]string{
			"deployment.kubernetes.io/desired-replicas": "3",
			"deployment.kubernetes.io/max-replicas":     "4", // 3 + 25% of 3 rounded up
		} {
			if got := rs.Annotations[k]; got != want {
				t.Errorf("the ReplicaSet's annotation %s = %q, want %q", k, got, want)
			}
		}
	})

	t.Run("every scaling was recorded as a ScalingReplicaSet Event of the Deployment", func(t *testing.T) {
		// 2 replicas with the default 25%: maxSurge 1 (0.5 rounded up),
		// maxUnavailable 0 (rounded down), so each rollout goes one pod
		// up, one pod down, twice.
		want := []string{
			"Scaled up replica set " + first + " from 0 to 2",
			"Scaled up replica set " + second + " from 0 to 1",
			"Scaled down replica set " + first + " from 2 to 1",
			"Scaled up replica set " + second + " from 1 to 2",
			"Scaled down replica set " + first + " from 1 to 0",
			"Scaled up replica set " + first + " from 0 to 1",
			"Scaled down replica set " + second + " from 2 to 1",
			"Scaled up replica set " + first + " from 1 to 2",
			"Scaled down replica set " + second + " from 1 to 0",
			"Scaled up replica set " + first + " from 2 to 3",
		}
		var evs corev1.EventList
		testserver.Eventually(t, "an Event for each scaling", func() (bool, string) {
			if err := c.List(ctx, client.Events, "default", client.ListOptions{FieldSelector: "reason=ScalingReplicaSet"}, &evs); err != nil {
				return false, err.Error()
			}
			var got []string
			for _, ev := range evs.Items {
				got = append(got, ev.Message)
			}
			for _, m := range want {
				if !slices.Contains(got, m) {
					return false, fmt.Sprintf("missing %q in %q", m, got)
				}
			}
			return true, ""
		})
		for _, ev := range evs.Items {
			if o := ev.InvolvedObject; o.Kind != "Deployment" || o.Name != "web" || o.UID != d.UID || ev.Type != corev1.EventTypeNormal {
				t.Errorf("event %q is a %s event about %s %s (uid %s), want a Normal event about the Deployment web", ev.Message, ev.Type, o.Kind, o.Name, o.UID)
			}
		}
	})
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A ReplicaSet made by hand whose labels a new Deployment's selector
// matches is adopted, and rolled over as the Deployment's old one (the
// conformance spec "deployment should support rollover").
func TestADeploymentAdoptsAnOrphanReplicaSetAndRollsItOver(t *testing.T) {
	c := startAPIServer(t)
	ctx := context.Background()
	reportPodsReady(t, c)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c, log, controllermanager.Options{ReplicaSet: replicaset.Options{Workers: 2}, Deployment: deployment.Options{Workers: 2},
			GarbageCollector: garbagecollector.Options{Workers: 2}})
	})
	one := int32(1)
	labels := map[string]string{"app": "web"}
	template := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image}}}}
	}
	byHand := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-by-hand", Labels: labels},
		Spec:       appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template("nginx:1.26")}}
	if err := c.Create(ctx, client.ReplicaSets, "default", byHand, byHand); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template("nginx:1.27")}}
	if err := c.Create(ctx, client.Deployments, "default", d, d); err != nil {
		t.Fatal(err)
	}
	r := waitSettled(t, c, "nginx:1.27", "1", 2) // its new ReplicaSet, and the adopted one scaled to 0
	adopted := r.running("nginx:1.26")
	if adopted == nil || adopted.Name != "web-by-hand" {
		t.Fatalf("the Deployment's ReplicaSets: %s", r)
	}
	if ref := metav1.GetControllerOf(adopted); ref.UID != r.d.UID || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("the adopted ReplicaSet's controller: %+v", ref)
	}
}
