package replicaset_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/internal/testserver"
)

// This file runs the controller against a real API server (embedded etcd,
// the apiserver package, HTTP), as the controller manager does. No kubelet
// or scheduler runs: pods stay unscheduled and Pending, which is enough for
// the controller, and the API server deletes a pod bound to no node at once.

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startAPIServer runs an API server for one test and returns a client of it.
func startAPIServer(t *testing.T) *client.Client {
	return client.New(testserver.Start(t), "replicaset-test")
}

// observer watches pods the way the test sees them: which pods were created
// already owned by the ReplicaSet (the controller's creations; an adopted
// orphan is created without an owner), and which pods were ever owned.
type observer struct {
	uid   types.UID
	inf   *client.Informer
	mu    sync.Mutex
	added map[string]bool // pods created with the ReplicaSet as controller
	owned map[string]bool // pods that had the ReplicaSet as controller at some point
}

func observe(t *testing.T, c *client.Client) *observer {
	o := &observer{inf: client.NewInformer(c, client.Pods, "default", client.ListOptions{}, discard()),
		added: map[string]bool{}, owned: map[string]bool{}}
	o.inf.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { o.seen(obj, true) },
		OnUpdate: func(_, obj runtime.Object) { o.seen(obj, false) },
	})
	testserver.Background(t, o.inf.Run)
	return o
}

func (o *observer) seen(obj runtime.Object, added bool) {
	pod := obj.(*corev1.Pod)
	o.mu.Lock()
	defer o.mu.Unlock()
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.UID == o.uid && o.uid != "" {
		o.owned[pod.Name] = true
		if added {
			o.added[pod.Name] = true
		}
	}
}

// setOwner names the ReplicaSet to look for; call it before any pod exists.
func (o *observer) setOwner(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.uid = uid
}

func (o *observer) creations() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.added)
}

// expectCreations checks that the controller created want pods in all. It
// first waits for the observer's watch to catch up with at least want
// creations, since it lags the server.
func (o *observer) expectCreations(t *testing.T, want int, why string) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("the observer sees %d creations", want), func() (bool, string) {
		n := o.creations()
		return n >= want, fmt.Sprintf("%d creations", n)
	})
	if n := o.creations(); n != want {
		t.Errorf("the controller created %d pods in all, want %d: %s", n, want, why)
	}
}

func (o *observer) everOwned(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owned[name]
}

// state is what the server says about the ReplicaSet and its pods.
type state struct {
	rs      *appsv1.ReplicaSet
	owned   []string // active pods whose controller is the ReplicaSet, sorted
	pods    map[string]*corev1.Pod
	allPods []string // every pod and its controller, for messages
}

func (s state) String() string {
	return fmt.Sprintf("replicas=%d status.replicas=%d observedGeneration=%d/%d owned=%v pods=%v",
		*s.rs.Spec.Replicas, s.rs.Status.Replicas, s.rs.Status.ObservedGeneration, s.rs.Generation, s.owned, s.allPods)
}

// settled: the ReplicaSet owns spec.replicas active pods and its status
// says so for the current generation.
func (s state) settled() bool {
	n := int(*s.rs.Spec.Replicas)
	return len(s.owned) == n && int(s.rs.Status.Replicas) == n && s.rs.Status.ObservedGeneration == s.rs.Generation
}

func read(t *testing.T, c *client.Client, name string) state {
	t.Helper()
	ctx := context.Background()
	s := state{rs: &appsv1.ReplicaSet{}, pods: map[string]*corev1.Pod{}}
	if err := c.Get(ctx, client.ReplicaSets, "default", name, s.rs); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, client.Pods, "default", client.ListOptions{}, &pods); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		s.pods[p.Name] = p
		owner := "-"
		if ref := metav1.GetControllerOf(p); ref != nil {
			owner = ref.Name
			if ref.UID == s.rs.UID && p.DeletionTimestamp == nil {
				s.owned = append(s.owned, p.Name)
			}
		}
		s.allPods = append(s.allPods, p.Name+"("+owner+")")
	}
	sort.Strings(s.owned)
	return s
}

func waitSettled(t *testing.T, c *client.Client, name string) state {
	t.Helper()
	var s state
	testserver.Eventually(t, "the ReplicaSet settles", func() (bool, string) {
		s = read(t, c, name)
		return s.settled(), s.String()
	})
	return s
}

func TestReplicaSetControllerAgainstARealAPIServer(t *testing.T) {
	c := startAPIServer(t)
	ctx := context.Background()
	obs := observe(t, c)

	replicas := int32(3)
	rs := &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	// The ReplicaSet is created before the controller starts, so that the
	// observer knows its UID before the first pod can appear.
	if err := c.Create(ctx, client.ReplicaSets, "default", rs, rs); err != nil {
		t.Fatal(err)
	}
	obs.setOwner(rs.UID)
	if !client.WaitForSync(ctx, obs.inf) {
		t.Fatal("observer did not sync")
	}

	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	d := controller.NewDeps(c, log, nil)
	ctrl := replicaset.New(d, replicaset.Options{Workers: 2})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)

	t.Run("a new ReplicaSet of 3 gets exactly 3 pods, each created once", func(t *testing.T) {
		s := waitSettled(t, c, "web")
		for _, name := range s.owned {
			p := s.pods[name]
			if !strings.HasPrefix(name, "web-") || p.Labels["app"] != "web" || len(p.Spec.Containers) != 1 {
				t.Errorf("pod %s is not made from the template: %+v", name, p.ObjectMeta)
			}
			if ref := metav1.GetControllerOf(p); ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
				t.Errorf("pod %s has controller reference %+v", name, ref)
			}
		}
		// The status says 3 for the current spec: some sync saw all three
		// pods in its cache, and every later sync sees them too, so no
		// create can be in flight any more.
		obs.expectCreations(t, 3, "expectations must stop a sync from acting on a cache that has not seen its own creations")
	})

	t.Run("scaling to 1 deletes 2 pods", func(t *testing.T) {
		before := read(t, c, "web").owned
		if err := c.Patch(ctx, client.ReplicaSets, "default", "web", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), nil); err != nil {
			t.Fatal(err)
		}
		s := waitSettled(t, c, "web")
		gone := 0
		for _, name := range before {
			if p, ok := s.pods[name]; !ok || p.DeletionTimestamp != nil {
				gone++
			}
		}
		if gone != 2 {
			t.Errorf("%d of the pods %v were deleted, want 2; now: %s", gone, before, s)
		}
		obs.expectCreations(t, 3, "scaling down creates nothing")
	})

	t.Run("a pod labelled out of the selector is released and replaced", func(t *testing.T) {
		victim := read(t, c, "web").owned[0]
		if err := c.Patch(ctx, client.Pods, "default", victim, types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"debug"}}}`), nil); err != nil {
			t.Fatal(err)
		}
		var s state
		testserver.Eventually(t, "the pod is released and a replacement owned", func() (bool, string) {
			s = read(t, c, "web")
			p, ok := s.pods[victim]
			return ok && metav1.GetControllerOf(p) == nil && s.settled() && s.owned[0] != victim, s.String()
		})
		for _, ref := range s.pods[victim].OwnerReferences {
			if ref.UID == s.rs.UID {
				t.Errorf("released pod %s still names the ReplicaSet: %+v", victim, ref)
			}
		}
		obs.expectCreations(t, 4, "one replacement for the released pod")
	})

	t.Run("an orphan matching the selector is adopted and the surplus deleted", func(t *testing.T) {
		orphan := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
		}
		if err := c.Create(ctx, client.Pods, "default", orphan, orphan); err != nil {
			t.Fatal(err)
		}
		testserver.Eventually(t, "the orphan is adopted", func() (bool, string) {
			return obs.everOwned("orphan"), read(t, c, "web").String()
		})
		s := waitSettled(t, c, "web")
		if len(s.owned) != 1 {
			t.Errorf("owned = %v, want 1 pod", s.owned)
		}
		obs.expectCreations(t, 4, "adopting creates nothing")
		// The released pod is none of the ReplicaSet's business any more.
		var pods corev1.PodList
		if err := c.List(ctx, client.Pods, "default", client.ListOptions{LabelSelector: "app=debug"}, &pods); err != nil || len(pods.Items) != 1 {
			t.Errorf("released pods: %d, %v; want 1", len(pods.Items), err)
		}
	})

	t.Run("the controller recorded its creations as Events", func(t *testing.T) {
		testserver.Eventually(t, "4 SuccessfulCreate events", func() (bool, string) {
			var evs corev1.EventList
			if err := c.List(ctx, client.Events, "default", client.ListOptions{FieldSelector: "reason=SuccessfulCreate"}, &evs); err != nil {
				return false, err.Error()
			}
			return len(evs.Items) == 4, fmt.Sprintf("%d events", len(evs.Items))
		})
	})
}
