package deployment_test

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/internal/testserver"
)

// These tests run the Deployment controller alone against a real API
// server. The test itself plays the ReplicaSet controller and the
// kubelets (fakePods): it writes each ReplicaSet's status as if the pods
// asked for were created and became available at once, and the pods no
// longer asked for were gone, unless told to hold a ReplicaSet's pods.
// A watch records every state the ReplicaSets go through, and the
// strategies' guarantees are checked on each of them.

// startDeploymentController runs the Deployment controller and returns
// its log, printed if the test fails.
func startDeploymentController(t *testing.T, c *client.Client) *testserver.LogBuffer {
	logs := &testserver.LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("deployment controller log:\n%s", logs)
		}
	})
	log := slog.New(slog.NewTextHandler(logs, nil))
	d := controller.NewDeps(c, log, nil)
	ctrl := deployment.New(d, deployment.Options{Workers: 2})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)
	return logs
}

// rsState is one ReplicaSet as a snapshot records it.
type rsState struct {
	name, image                  string
	spec, pods, available, unobs int32 // unobs: 1 while status.observedGeneration < generation
}

// snapshot is every ReplicaSet of the test's namespace at one point of
// the watch, by name.
type snapshot map[string]rsState

func (s snapshot) String() string {
	var parts []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s {
			if !yield(n) {
				return
			}
		}
	}) {
		r := s[name]
		parts = append(parts, fmt.Sprintf("%s(%s spec=%d pods=%d available=%d)", r.name, r.image, r.spec, r.pods, r.available))
	}
	return strings.Join(parts, " ")
}

// fakePods plays the ReplicaSet controller and the kubelets, and records
// the history of the ReplicaSets from the same watch.
type fakePods struct {
	t    *testing.T
	c    *client.Client
	inf  *client.Informer
	mu   sync.Mutex
	held map[string]bool // ReplicaSets whose status is left alone
	hist []snapshot      // every state, in watch order
}

func startFakePods(t *testing.T, c *client.Client) *fakePods {
	f := &fakePods{t: t, c: c, held: map[string]bool{},
		inf: client.NewInformer(c, client.ReplicaSets, "default", client.ListOptions{}, discard())}
	on := func(obj runtime.Object) {
		f.record()
		f.reconcile(obj.(*appsv1.ReplicaSet))
	}
	f.inf.AddHandler(client.Handler{OnAdd: on, OnUpdate: func(_, obj runtime.Object) { on(obj) }})
	testserver.Background(t, f.inf.Run)
	return f
}

// record appends the cache's current state: an informer's handler runs
// after its cache took the event, so this is the state right after it.
func (f *fakePods) record() {
	s := snapshot{}
	for _, obj := range f.inf.Cache().List() {
		rs := obj.(*appsv1.ReplicaSet)
		st := rsState{name: rs.Name, image: rs.Spec.Template.Spec.Containers[0].Image, spec: *rs.Spec.Replicas,
			pods: rs.Status.Replicas, available: rs.Status.AvailableReplicas}
		if rs.Status.ObservedGeneration < rs.Generation {
			st.unobs = 1
		}
		s[rs.Name] = st
	}
	f.mu.Lock()
	f.hist = append(f.hist, s)
	f.mu.Unlock()
}

// reconcile writes the status of rs's spec: every pod asked for exists
// and is available, every other is gone. A Conflict means a newer
// version exists, whose own event comes next.
func (f *fakePods) reconcile(rs *appsv1.ReplicaSet) {
	f.mu.Lock()
	held := f.held[rs.Name]
	f.mu.Unlock()
	n := *rs.Spec.Replicas
	want := appsv1.ReplicaSetStatus{Replicas: n, FullyLabeledReplicas: n, ReadyReplicas: n, AvailableReplicas: n, ObservedGeneration: rs.Generation}
	if held || rs.Status.Replicas == want.Replicas && rs.Status.AvailableReplicas == want.AvailableReplicas && rs.Status.ObservedGeneration == want.ObservedGeneration {
		return
	}
	next := rs.DeepCopy()
	next.Status = want
	if err := f.c.UpdateStatus(context.Background(), client.ReplicaSets, rs.Namespace, rs.Name, next, nil); err != nil && !apierrors.IsConflict(err) {
		f.t.Errorf("fake status of %s: %v", rs.Name, err)
	}
}

// hold keeps a ReplicaSet's pods as they are: its status is not written.
func (f *fakePods) hold(name string) {
	f.mu.Lock()
	f.held[name] = true
	f.mu.Unlock()
}

// release lets a held ReplicaSet's pods follow its spec again.
func (f *fakePods) release(name string) {
	f.mu.Lock()
	delete(f.held, name)
	f.mu.Unlock()
	if obj, ok := f.inf.Cache().Get("default/" + name); ok {
		f.reconcile(obj.(*appsv1.ReplicaSet))
	}
}

// since returns the snapshots from the first one in which a ReplicaSet
// runs image: the rollout to image, and what follows.
func (f *fakePods) since(image string) []snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, s := range f.hist {
		for _, r := range s {
			if r.image == image {
				return slices.Clone(f.hist[i:])
			}
		}
	}
	return nil
}

// newDeployment creates a Deployment of replicas nginx:1.27 pods.
func newDeployment(t *testing.T, c *client.Client, name string, replicas int32, strategy appsv1.DeploymentStrategy) {
	t.Helper()
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Strategy: strategy,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if err := c.Create(context.Background(), client.Deployments, "default", d, nil); err != nil {
		t.Fatal(err)
	}
}

func patchDeployment(t *testing.T, c *client.Client, name, patch string) {
	t.Helper()
	if err := c.Patch(context.Background(), client.Deployments, "default", name, types.MergePatchType, []byte(patch), nil); err != nil {
		t.Fatal(err)
	}
}

func setImageOf(t *testing.T, c *client.Client, name, image string) {
	t.Helper()
	patchDeployment(t, c, name, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, image))
}

// state is the Deployment name and its ReplicaSets, as the server has them.
type state struct {
	d     *appsv1.Deployment
	rsets []*appsv1.ReplicaSet
}

func readState(t *testing.T, c *client.Client, name string) state {
	t.Helper()
	s := state{d: &appsv1.Deployment{}}
	if err := c.Get(context.Background(), client.Deployments, "default", name, s.d); err != nil {
		t.Fatal(err)
	}
	var list appsv1.ReplicaSetList
	if err := c.List(context.Background(), client.ReplicaSets, "default", client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == s.d.UID {
			s.rsets = append(s.rsets, &list.Items[i])
		}
	}
	return s
}

func (s state) running(image string) *appsv1.ReplicaSet {
	for _, rs := range s.rsets {
		if rs.Spec.Template.Spec.Containers[0].Image == image {
			return rs
		}
	}
	return nil
}

func (s state) progressing() string {
	for _, c := range s.d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Reason
		}
	}
	return ""
}

func (s state) String() string {
	st := s.d.Status
	out := fmt.Sprintf("generation=%d observed=%d replicas=%d updated=%d available=%d progressing=%s;",
		s.d.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, s.progressing())
	for _, rs := range s.rsets {
		out += fmt.Sprintf(" %s(%s spec=%d available=%d)", rs.Name, rs.Spec.Template.Spec.Containers[0].Image, *rs.Spec.Replicas, rs.Status.AvailableReplicas)
	}
	return out
}

// waitRolledOut waits until the Deployment runs replicas available pods
// of image and nothing else, its status says so for its latest spec, and
// Progressing says NewReplicaSetAvailable: what `kubectl rollout status`
// calls "successfully rolled out".
func waitRolledOut(t *testing.T, c *client.Client, name, image string, replicas int32) state {
	t.Helper()
	var s state
	testserver.Eventually(t, fmt.Sprintf("%s has rolled out %d pods of %s", name, replicas, image), func() (bool, string) {
		s = readState(t, c, name)
		st, cur := s.d.Status, s.running(image)
		ok := cur != nil && st.ObservedGeneration == s.d.Generation && st.UpdatedReplicas == replicas &&
			st.Replicas == replicas && st.AvailableReplicas == replicas && s.progressing() == "NewReplicaSetAvailable"
		for _, rs := range s.rsets {
			if rs != cur && *rs.Spec.Replicas != 0 {
				ok = false
			}
		}
		return ok, s.String()
	})
	return s
}

// scalingEvents lists the messages of the ScalingReplicaSet Events of
// the Deployment, once there are at least n.
func scalingEvents(t *testing.T, c *client.Client, name string, n int) []string {
	t.Helper()
	var got []string
	testserver.Eventually(t, fmt.Sprintf("%d ScalingReplicaSet events of %s", n, name), func() (bool, string) {
		var evs corev1.EventList
		err := c.List(context.Background(), client.Events, "default",
			client.ListOptions{FieldSelector: "reason=ScalingReplicaSet,involvedObject.name=" + name}, &evs)
		if err != nil {
			return false, err.Error()
		}
		slices.SortFunc(evs.Items, func(a, b corev1.Event) int { return strings.Compare(a.Name, b.Name) }) // named <object>.<nanoseconds>
		got = nil
		for _, ev := range evs.Items {
			if o := ev.InvolvedObject; o.Kind != "Deployment" || o.APIVersion != "apps/v1" || o.UID == "" {
				t.Errorf("event %q is about %s %s (uid %q), want the Deployment %s", ev.Message, o.APIVersion, o.Kind, o.UID, name)
			}
			got = append(got, ev.Message)
		}
		return len(got) >= n, fmt.Sprint(got)
	})
	return got
}

func TestRollingUpdateAgainstARealAPIServer(t *testing.T) {
	c := startAPIServer(t)
	fake := startFakePods(t, c)
	startDeploymentController(t, c)
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	newDeployment(t, c, "web", 4, appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &zero}})
	first := waitRolledOut(t, c, "web", "nginx:1.27", 4).running("nginx:1.27").Name
	var second string

	t.Run("with maxSurge 1 and maxUnavailable 0, a rollout of 4 never asks for more than 5 pods nor has fewer than 4 available", func(t *testing.T) {
		setImageOf(t, c, "web", "nginx:1.28")
		second = waitRolledOut(t, c, "web", "nginx:1.28", 4).running("nginx:1.28").Name
		hist := fake.since("nginx:1.28")
		var newSizes []int32
		for _, s := range hist {
			var total, available int32
			for _, r := range s {
				total += r.spec
				available += min(r.spec, r.available) // pods beyond spec are being deleted
			}
			if total > 5 {
				t.Errorf("%d pods asked for, more than 4 + maxSurge 1: %s", total, s)
			}
			if available < 4 {
				t.Errorf("%d pods available, fewer than 4 - maxUnavailable 0: %s", available, s)
			}
			if n := s[second].spec; len(newSizes) == 0 || newSizes[len(newSizes)-1] != n {
				newSizes = append(newSizes, n)
			}
		}
		if want := []int32{0, 1, 2, 3, 4}; !slices.Equal(newSizes, want) {
			t.Errorf("the new ReplicaSet went through sizes %v, want %v (one pod at a time)", newSizes, want)
		}
	})

	t.Run("each step is a ScalingReplicaSet event in Kubernetes' words, new up and old down in turn", func(t *testing.T) {
		got := scalingEvents(t, c, "web", 9)
		want := []string{"Scaled up replica set " + first + " from 0 to 4"}
		for i := range 4 {
			want = append(want, fmt.Sprintf("Scaled up replica set %s from %d to %d", second, i, i+1),
				fmt.Sprintf("Scaled down replica set %s from %d to %d", first, 4-i, 3-i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("events\n %q\nwant\n %q", got, want)
		}
	})

	t.Run("a paused Deployment takes a new template without rolling it out, and still scales", func(t *testing.T) {
		patchDeployment(t, c, "web", `{"spec":{"paused":true}}`)
		testserver.Eventually(t, "Progressing says DeploymentPaused", func() (bool, string) {
			s := readState(t, c, "web")
			return s.progressing() == "DeploymentPaused" && s.d.Status.ObservedGeneration == s.d.Generation, s.String()
		})
		setImageOf(t, c, "web", "nginx:1.29")
		patchDeployment(t, c, "web", `{"spec":{"replicas":5}}`)
		var s state
		testserver.Eventually(t, "the paused Deployment has seen the new template and spec.replicas 5", func() (bool, string) {
			s = readState(t, c, "web")
			return s.d.Status.ObservedGeneration == s.d.Generation && s.d.Status.Replicas == 5, s.String()
		})
		if rs := s.running("nginx:1.29"); rs != nil {
			t.Errorf("a paused Deployment created ReplicaSet %s for its new template: %s", rs.Name, s)
		}
		if cur := s.running("nginx:1.28"); cur == nil || *cur.Spec.Replicas != 5 {
			t.Errorf("the running ReplicaSet was not scaled to 5 while paused: %s", s)
		}
		if s.d.Status.UpdatedReplicas != 0 || s.progressing() != "DeploymentPaused" {
			t.Errorf("a paused Deployment with a new template has no up-to-date replica and stays DeploymentPaused: %s", s)
		}
	})

	t.Run("resuming rolls the new template out and says DeploymentResumed on the way", func(t *testing.T) {
		reasons := watchProgressing(t, c, "web")
		patchDeployment(t, c, "web", `{"spec":{"paused":false}}`)
		waitRolledOut(t, c, "web", "nginx:1.29", 5)
		var got []string
		testserver.Eventually(t, "the watch sees the rollout end", func() (bool, string) {
			got = reasons()
			return len(got) > 0 && got[len(got)-1] == "NewReplicaSetAvailable", fmt.Sprint(got)
		})
		if i := slices.Index(got, "DeploymentResumed"); i < 0 || slices.Index(got[i:], "ReplicaSetUpdated") < 0 {
			t.Errorf("the Progressing reasons went %v, want DeploymentResumed, then ReplicaSetUpdated, then NewReplicaSetAvailable", got)
		}
		for _, s := range fake.since("nginx:1.29") {
			var total int32
			for _, r := range s {
				total += r.spec
			}
			if total > 6 {
				t.Errorf("%d pods asked for, more than 5 + maxSurge 1: %s", total, s)
			}
		}
	})
}

// watchProgressing records, from a watch, each new reason of the
// Progressing condition of a Deployment; it returns a function reading
// them so far.
func watchProgressing(t *testing.T, c *client.Client, name string) func() []string {
	var mu sync.Mutex
	var reasons []string
	inf := client.NewInformer(c, client.Deployments, "default", client.ListOptions{}, discard())
	note := func(obj runtime.Object) {
		d := obj.(*appsv1.Deployment)
		if d.Name != name {
			return
		}
		for _, cond := range d.Status.Conditions {
			mu.Lock()
			if cond.Type == appsv1.DeploymentProgressing && (len(reasons) == 0 || reasons[len(reasons)-1] != cond.Reason) {
				reasons = append(reasons, cond.Reason)
			}
			mu.Unlock()
		}
	}
	inf.AddHandler(client.Handler{OnAdd: note, OnUpdate: func(_, obj runtime.Object) { note(obj) }})
	testserver.Background(t, inf.Run)
	if !client.WaitForSync(context.Background(), inf) {
		t.Fatal("the Deployment watch did not sync")
	}
	return func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(reasons) }
}

func TestRecreateAgainstARealAPIServer(t *testing.T) {
	c := startAPIServer(t)
	fake := startFakePods(t, c)
	logs := startDeploymentController(t, c)
	newDeployment(t, c, "web", 3, appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType})
	old := waitRolledOut(t, c, "web", "nginx:1.27", 3).running("nginx:1.27").Name

	t.Run("the old ReplicaSet is scaled to 0 and, while its pods remain, no new ReplicaSet is even created", func(t *testing.T) {
		fake.hold(old) // its 3 pods keep running
		setImageOf(t, c, "web", "nginx:1.28")
		testserver.Eventually(t, "the controller waits for the old pods", func() (bool, string) {
			return strings.Contains(logs.String(), "recreate waits for the old pods to be gone"), readState(t, c, "web").String()
		})
		s := readState(t, c, "web")
		if rs := s.running("nginx:1.27"); rs == nil || *rs.Spec.Replicas != 0 || rs.Status.Replicas != 3 {
			t.Errorf("the old ReplicaSet should be scaled to 0 with its 3 pods still there: %s", s)
		}
		if rs := s.running("nginx:1.28"); rs != nil {
			t.Errorf("the new ReplicaSet %s exists while old pods run: %s", rs.Name, s)
		}
	})

	t.Run("once the old pods are gone, the new ReplicaSet goes to 3 in one step", func(t *testing.T) {
		fake.release(old)
		s := waitRolledOut(t, c, "web", "nginx:1.28", 3)
		for _, snap := range fake.since("nginx:1.28") {
			newUp, oldLeft := false, false
			for _, r := range snap {
				switch {
				case r.image == "nginx:1.28" && r.spec > 0:
					newUp = true
				case r.image != "nginx:1.28" && (r.spec > 0 || r.pods > 0 || r.unobs > 0):
					oldLeft = true
				}
			}
			if newUp && oldLeft {
				t.Errorf("new pods were asked for while old ones remained: %s", snap)
			}
		}
		want := []string{"Scaled up replica set " + old + " from 0 to 3", "Scaled down replica set " + old + " from 3 to 0",
			"Scaled up replica set " + s.running("nginx:1.28").Name + " from 0 to 3"}
		if got := scalingEvents(t, c, "web", 3); !slices.Equal(got, want) {
			t.Errorf("events\n %q\nwant\n %q", got, want)
		}
	})
}
