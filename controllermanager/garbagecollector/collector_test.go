package garbagecollector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/internal/testserver"
)

// This file runs the whole controller manager (garbage collector, ReplicaSet
// and Deployment controllers on shared informers) against a real API
// server: embedded etcd, the apiserver package, HTTP. No scheduler or
// kubelet runs: pods stay unbound, and the API server deletes a pod bound
// to no node at once, without a grace period.

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// testAPI is an API server for one test: a client of it, and its URL for
// the requests the client does not make (DELETE with query parameters).
type testAPI struct {
	*client.Client
	url string
}

func startAPIServer(t *testing.T) testAPI {
	url := testserver.Start(t)
	return testAPI{Client: client.New(url, "garbagecollector-test"), url: url}
}

// deleteObject deletes like kubectl delete --cascade=...: DELETE with
// ?propagationPolicy= (none: the server's default, Background). It returns
// what the server answered: the object as deleted, or as marked for
// deletion while finalizers hold it.
func deleteObject(t *testing.T, api testAPI, res client.Resource, name string, policy metav1.DeletionPropagation) metav1.Object {
	t.Helper()
	u := api.url + res.Path("default", name)
	if policy != "" {
		u += "?propagationPolicy=" + string(policy)
	}
	req, err := http.NewRequest(http.MethodDelete, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE %s: %d %s %v", u, resp.StatusCode, body, err)
	}
	obj := res.New()
	if err := json.Unmarshal(body, obj); err != nil {
		t.Fatalf("DELETE %s answered %s: %v", u, body, err)
	}
	return obj.(metav1.Object)
}

// gone reports whether the server no longer has the object.
func gone(t *testing.T, c testAPI, res client.Resource, name string) bool {
	t.Helper()
	err := c.Get(context.Background(), res, "default", name, res.New())
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// podsLabelled lists the pods with label app=app, by name.
func podsLabelled(t *testing.T, c testAPI, app string) map[string]*corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), client.Pods, "default", client.ListOptions{LabelSelector: "app=" + app}, &pods); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range pods.Items {
		out[pods.Items[i].Name] = &pods.Items[i]
	}
	return out
}

func names[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
	}
}

// createReplicaSet creates a ReplicaSet name of replicas pods labelled app=name.
func createReplicaSet(t *testing.T, c testAPI, name string, replicas int32) *appsv1.ReplicaSet {
	t.Helper()
	rs := &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Template: podTemplate(name),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
	}
	if err := c.Create(context.Background(), client.ReplicaSets, "default", rs, rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// waitPods waits until the ReplicaSet's status counts n pods for its current
// spec and n pods labelled app are controlled by it, and returns them.
// The status also means the controller manager's shared pod cache, which
// the garbage collector reads, has seen them all.
func waitPods(t *testing.T, c testAPI, rsName, app string, n int) map[string]*corev1.Pod {
	t.Helper()
	var pods map[string]*corev1.Pod
	testserver.Eventually(t, fmt.Sprintf("ReplicaSet %s has %d pods", rsName, n), func() (bool, string) {
		rs := &appsv1.ReplicaSet{}
		if err := c.Get(context.Background(), client.ReplicaSets, "default", rsName, rs); err != nil {
			return false, err.Error()
		}
		pods = podsLabelled(t, c, app)
		owned := 0
		for _, p := range pods {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == rs.UID {
				owned++
			}
		}
		return owned == n && len(pods) == n && rs.Status.Replicas == int32(n) && rs.Status.ObservedGeneration == rs.Generation,
			fmt.Sprintf("status.replicas=%d, %d owned pods of %v", rs.Status.Replicas, owned, names(pods))
	})
	return pods
}

// createPod creates a pod with the given owners, labelled app=name so that
// no ReplicaSet's selector matches it.
func createPod(t *testing.T, c testAPI, name string, owners ...metav1.OwnerReference) {
	t.Helper()
	tmpl := podTemplate(name)
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Namespace, pod.Name, pod.OwnerReferences = "default", name, owners
	if err := c.Create(context.Background(), client.Pods, "default", pod, pod); err != nil {
		t.Fatal(err)
	}
}

func replicaSetRef(name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: uid}
}

// deletions records, from watches, the resourceVersion at which each pod,
// ReplicaSet and Deployment was deleted. Resource versions are etcd
// revisions, one sequence for all resources, so they order deletions
// across resources however late each watch delivers them.
type deletions struct {
	mu sync.Mutex
	rv map[string]int64 // "<resource>/<name>" → revision of its deletion
}

func watchDeletions(t *testing.T, c testAPI) *deletions {
	d := &deletions{rv: map[string]int64{}}
	var infs []*client.Informer
	for _, res := range []client.Resource{client.Pods, client.ReplicaSets, client.Deployments} {
		inf := client.NewInformer(c.Client, res, "default", client.ListOptions{}, discard())
		inf.AddHandler(client.Handler{OnDelete: func(obj runtime.Object) {
			m := obj.(metav1.Object)
			rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
			d.mu.Lock()
			d.rv[res.Name+"/"+m.GetName()] = rv
			d.mu.Unlock()
		}})
		testserver.Background(t, inf.Run)
		infs = append(infs, inf)
	}
	if !client.WaitForSync(context.Background(), infs...) {
		t.Fatal("deletion watch did not sync")
	}
	return d
}

// at is the revision at which each object was deleted, once the watches
// have seen them all.
func (d *deletions) at(t *testing.T, keys ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	testserver.Eventually(t, fmt.Sprintf("the watches see the deletion of %v", keys), func() (bool, string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, k := range keys {
			rv, ok := d.rv[k]
			if !ok {
				return false, fmt.Sprintf("seen: %v", d.rv)
			}
			out[k] = rv
		}
		return true, ""
	})
	return out
}

func TestGarbageCollectorAgainstARealAPIServer(t *testing.T) {
	c := startAPIServer(t)
	ctx := context.Background()
	dels := watchDeletions(t, c)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	// One collector worker: its queue is then processed in order, which
	// the last case needs to know an object was looked at and kept.
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c.Client, log, controllermanager.Options{ReplicaSet: replicaset.Options{Workers: 2}, Deployment: deployment.Options{Workers: 2},
			GarbageCollector: garbagecollector.Options{Workers: 1}})
	})

	t.Run("deleting a ReplicaSet in the background removes it at once, then the collector deletes its pods", func(t *testing.T) {
		createReplicaSet(t, c, "background", 2)
		pods := waitPods(t, c, "background", "background", 2)
		deleteObject(t, c, client.ReplicaSets, "background", "")
		if !gone(t, c, client.ReplicaSets, "background") {
			t.Errorf("the ReplicaSet should be gone as soon as the DELETE returns")
		}
		testserver.Eventually(t, "the pods are deleted", func() (bool, string) {
			left := podsLabelled(t, c, "background")
			return len(left) == 0, fmt.Sprintf("pods %v of %v left", names(left), names(pods))
		})
	})

	t.Run("deleting a ReplicaSet with propagationPolicy=Orphan keeps its pods and removes their ownerReference first", func(t *testing.T) {
		rs := createReplicaSet(t, c, "orphaning", 2)
		before := waitPods(t, c, "orphaning", "orphaning", 2)
		marked := deleteObject(t, c, client.ReplicaSets, "orphaning", metav1.DeletePropagationOrphan)
		if marked.GetDeletionTimestamp() == nil || !slices.Contains(marked.GetFinalizers(), metav1.FinalizerOrphanDependents) {
			t.Errorf("the DELETE should leave the ReplicaSet marked for deletion with the orphan finalizer, got deletionTimestamp=%v finalizers=%v",
				marked.GetDeletionTimestamp(), marked.GetFinalizers())
		}
		testserver.Eventually(t, "the ReplicaSet is gone once its finalizer is removed", func() (bool, string) {
			return gone(t, c, client.ReplicaSets, "orphaning"), "the ReplicaSet still exists"
		})
		// The collector removes the ownerReferences before the finalizer,
		// so the pods are orphans by the time the ReplicaSet is gone, and
		// an orphan is never garbage.
		after := podsLabelled(t, c, "orphaning")
		if !slices.Equal(names(after), names(before)) {
			t.Errorf("pods %v after the deletion, want the same pods as before %v", names(after), names(before))
		}
		for _, p := range after {
			if p.DeletionTimestamp != nil {
				t.Errorf("pod %s is being deleted", p.Name)
			}
			for _, ref := range p.OwnerReferences {
				if ref.UID == rs.UID {
					t.Errorf("pod %s still names the deleted ReplicaSet as its owner: %+v", p.Name, ref)
				}
			}
		}
	})

	t.Run("deleting a Deployment in the foreground deletes its pods, then its ReplicaSet, then the Deployment", func(t *testing.T) {
		replicas := int32(2)
		d := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "foreground"},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: podTemplate("foreground"),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "foreground"}}},
		}
		if err := c.Create(ctx, client.Deployments, "default", d, d); err != nil {
			t.Fatal(err)
		}
		var rs *appsv1.ReplicaSet
		testserver.Eventually(t, "the Deployment has a ReplicaSet", func() (bool, string) {
			var l appsv1.ReplicaSetList
			if err := c.List(ctx, client.ReplicaSets, "default", client.ListOptions{LabelSelector: "app=foreground"}, &l); err != nil {
				return false, err.Error()
			}
			if len(l.Items) != 1 {
				return false, fmt.Sprintf("%d ReplicaSets", len(l.Items))
			}
			rs = &l.Items[0]
			return true, ""
		})
		pods := waitPods(t, c, rs.Name, "foreground", 2)

		marked := deleteObject(t, c, client.Deployments, "foreground", metav1.DeletePropagationForeground)
		if marked.GetDeletionTimestamp() == nil || !slices.Contains(marked.GetFinalizers(), metav1.FinalizerDeleteDependents) {
			t.Errorf("the DELETE should leave the Deployment marked for deletion with the foregroundDeletion finalizer, got deletionTimestamp=%v finalizers=%v",
				marked.GetDeletionTimestamp(), marked.GetFinalizers())
		}
		testserver.Eventually(t, "the Deployment, its ReplicaSet and its pods are gone", func() (bool, string) {
			left := podsLabelled(t, c, "foreground")
			dGone, rsGone := gone(t, c, client.Deployments, "foreground"), gone(t, c, client.ReplicaSets, rs.Name)
			return dGone && rsGone && len(left) == 0, fmt.Sprintf("deployment gone=%v, replicaset gone=%v, pods left %v", dGone, rsGone, names(left))
		})
		keys := []string{"deployments/foreground", "replicasets/" + rs.Name}
		for name := range pods {
			keys = append(keys, "pods/"+name)
		}
		at := dels.at(t, keys...)
		for name := range pods {
			if at["pods/"+name] >= at["replicasets/"+rs.Name] {
				t.Errorf("pod %s was deleted at revision %d, not before its ReplicaSet (%d)", name, at["pods/"+name], at["replicasets/"+rs.Name])
			}
		}
		if at["replicasets/"+rs.Name] >= at["deployments/foreground"] {
			t.Errorf("the ReplicaSet was deleted at revision %d, not before its Deployment (%d)", at["replicasets/"+rs.Name], at["deployments/foreground"])
		}
	})

	t.Run("an owner deleted in the foreground also deletes a dependent that does not block it, and then goes", func(t *testing.T) {
		// blockOwnerDeletion only says whether the owner waits for the
		// dependent; in a foreground deletion every dependent is deleted.
		owner := createReplicaSet(t, c, "nonblocking-owner", 0)
		createPod(t, c, "nonblocking-dependent", replicaSetRef(owner.Name, owner.UID))
		deleteObject(t, c, client.ReplicaSets, owner.Name, metav1.DeletePropagationForeground)
		testserver.Eventually(t, "the dependent and its owner are gone", func() (bool, string) {
			podGone, ownerGone := gone(t, c, client.Pods, "nonblocking-dependent"), gone(t, c, client.ReplicaSets, owner.Name)
			return podGone && ownerGone, fmt.Sprintf("dependent gone=%v, owner gone=%v", podGone, ownerGone)
		})
	})

	t.Run("owners in a circle deleted in the foreground all go", func(t *testing.T) {
		// Kubernetes' "should not be blocked by dependency circle": pod1
		// is owned by pod3, pod3 by pod2, pod2 by pod1, each reference
		// blocking, and pod1 is deleted in the foreground.
		names := []string{"circle-1", "circle-2", "circle-3"}
		uids := map[string]types.UID{}
		for _, name := range names {
			createPod(t, c, name)
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.Pods, "default", name, p); err != nil {
				t.Fatal(err)
			}
			uids[name] = p.UID
		}
		for i, name := range names {
			owner := names[(i+len(names)-1)%len(names)] // 1 ← 3, 2 ← 1, 3 ← 2
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.Pods, "default", name, p); err != nil {
				t.Fatal(err)
			}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner, UID: uids[owner],
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			if err := c.Update(ctx, client.Pods, "default", name, p, p); err != nil {
				t.Fatal(err)
			}
		}
		deleteObject(t, c, client.Pods, "circle-1", metav1.DeletePropagationForeground)
		testserver.Eventually(t, "the three pods are gone", func() (bool, string) {
			var left []string
			for _, name := range names {
				if !gone(t, c, client.Pods, name) {
					left = append(left, name)
				}
			}
			return len(left) == 0, fmt.Sprintf("left: %v", left)
		})
	})

	t.Run("a dependent with a valid owner outlives an owner deleted in the foreground, which goes", func(t *testing.T) {
		// Kubernetes' "should not delete dependents that have both valid
		// owner and owner that's waiting for dependents to be deleted":
		// half of a ReplicaSet's pods are also owned by a second one.
		createReplicaSet(t, c, "to-be-deleted", 4)
		pods := waitPods(t, c, "to-be-deleted", "to-be-deleted", 4)
		stay := createReplicaSet(t, c, "to-stay", 0)
		shared := names(pods)[:2]
		for _, name := range shared {
			p := pods[name]
			p.OwnerReferences = append(p.OwnerReferences, replicaSetRef(stay.Name, stay.UID))
			if err := c.Update(ctx, client.Pods, "default", name, p, p); err != nil {
				t.Fatal(err)
			}
		}
		deleteObject(t, c, client.ReplicaSets, "to-be-deleted", metav1.DeletePropagationForeground)
		testserver.Eventually(t, "the deleted owner goes", func() (bool, string) {
			return gone(t, c, client.ReplicaSets, "to-be-deleted"), fmt.Sprintf("pods: %v", names(podsLabelled(t, c, "to-be-deleted")))
		})
		left := podsLabelled(t, c, "to-be-deleted")
		if got := names(left); !slices.Equal(got, shared) {
			t.Fatalf("pods left %v, want %v", got, shared)
		}
		for _, p := range left {
			if p.DeletionTimestamp != nil || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != stay.UID {
				t.Errorf("pod %s: deletionTimestamp %v, owners %v; want only %s", p.Name, p.DeletionTimestamp, p.OwnerReferences, stay.Name)
			}
		}
	})

	t.Run("only a dependent whose owners are all gone is deleted", func(t *testing.T) {
		x := createReplicaSet(t, c, "x", 0)
		// Created in this order, the pods reach the collector's single
		// worker in this order (their names sort the same way, in case a
		// relist replays them): once the last is deleted, the others have
		// been looked at, and kept.
		kept := []struct {
			name   string
			owners []metav1.OwnerReference
		}{
			{"dep-1-owner-alive", []metav1.OwnerReference{replicaSetRef("x", x.UID)}},
			{"dep-2-owner-of-unknown-kind", []metav1.OwnerReference{
				{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "widget-uid"}}},
			{"dep-3-owner-of-unknown-kind-and-owner-gone", []metav1.OwnerReference{
				{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "widget-uid"},
				replicaSetRef("gone", "uid-of-a-deleted-replicaset")}},
		}
		for _, p := range kept {
			createPod(t, c, p.name, p.owners...)
		}
		// The owner named "x" exists, but it is not the object this pod
		// names: a ReplicaSet of the same name created later.
		createPod(t, c, "dep-4-owner-replaced", replicaSetRef("x", "uid-of-an-older-x"))

		testserver.Eventually(t, "the pod whose owner's UID does not match the live x is deleted", func() (bool, string) {
			return gone(t, c, client.Pods, "dep-4-owner-replaced"), "it still exists"
		})
		for _, want := range kept {
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.Pods, "default", want.name, p); err != nil {
				t.Errorf("pod %s: %v", want.name, err)
				continue
			}
			if p.DeletionTimestamp != nil {
				t.Errorf("pod %s is being deleted", want.name)
			}
		}
	})
}
