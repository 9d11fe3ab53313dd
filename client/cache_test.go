package client

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// testPod is a pod in namespace ns, on node (may be ""), owned by the
// objects with the given UIDs.
func testPod(ns, name, node string, owners ...string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node},
	}
	for _, uid := range owners {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + uid, UID: types.UID(uid)})
	}
	return p
}

func keysOf(objs []runtime.Object) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, KeyOf(o))
	}
	return out
}

func TestKeyOf(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{"a namespaced object's key is namespace/name", testPod("default", "web", ""), "default/web"},
		{"a cluster-scoped object's key is its name", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01"}}, "node01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyOf(tt.obj); got != tt.want {
				t.Errorf("KeyOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCacheIndexes(t *testing.T) {
	// op is one change to the cache: a pod stored, or a key removed.
	type op struct {
		set    *corev1.Pod
		remove string
	}
	// query is one ByIndex lookup and the keys it must return, in order.
	type query struct {
		index, value string
		want         []string
	}
	tests := []struct {
		name    string
		ops     []op
		queries []query
	}{
		{
			name: "pods are found by the node they are bound to, sorted by key",
			ops: []op{
				{set: testPod("default", "web-2", "node01")},
				{set: testPod("default", "web-1", "node01")},
				{set: testPod("default", "db", "node02")},
			},
			queries: []query{
				{IndexPodsByNode, "node01", []string{"default/web-1", "default/web-2"}},
				{IndexPodsByNode, "node02", []string{"default/db"}},
				{IndexPodsByNode, "node03", []string{}},
			},
		},
		{
			name: "unscheduled pods are indexed under the empty node name",
			ops:  []op{{set: testPod("default", "pending", "")}, {set: testPod("default", "bound", "node01")}},
			queries: []query{
				{IndexPodsByNode, "", []string{"default/pending"}},
			},
		},
		{
			name: "a pod that moves to another node leaves the old node's index",
			ops: []op{
				{set: testPod("default", "web", "")},
				{set: testPod("default", "web", "node01")},
				{set: testPod("default", "web", "node02")},
			},
			queries: []query{
				{IndexPodsByNode, "", []string{}},
				{IndexPodsByNode, "node01", []string{}},
				{IndexPodsByNode, "node02", []string{"default/web"}},
			},
		},
		{
			name: "a removed pod disappears from every index",
			ops: []op{
				{set: testPod("default", "web", "node01", "uid-1")},
				{set: testPod("default", "db", "node01", "uid-1")},
				{remove: "default/web"},
			},
			queries: []query{
				{IndexPodsByNode, "node01", []string{"default/db"}},
				{IndexByNamespace, "default", []string{"default/db"}},
				{IndexByOwnerUID, "uid-1", []string{"default/db"}},
			},
		},
		{
			name: "removing a key that is not there changes nothing",
			ops:  []op{{set: testPod("default", "web", "node01")}, {remove: "default/nothing"}},
			queries: []query{
				{IndexPodsByNode, "node01", []string{"default/web"}},
			},
		},
		{
			name: "objects are found by namespace",
			ops: []op{
				{set: testPod("kube-system", "dns", "node01")},
				{set: testPod("default", "web", "node01")},
				{set: testPod("default", "api", "node02")},
			},
			queries: []query{
				{IndexByNamespace, "default", []string{"default/api", "default/web"}},
				{IndexByNamespace, "kube-system", []string{"kube-system/dns"}},
			},
		},
		{
			name: "a pod with two owners is found under each owner's UID",
			ops: []op{
				{set: testPod("default", "shared", "", "uid-1", "uid-2")},
				{set: testPod("default", "mine", "", "uid-1")},
				{set: testPod("default", "orphan", "")},
			},
			queries: []query{
				{IndexByOwnerUID, "uid-1", []string{"default/mine", "default/shared"}},
				{IndexByOwnerUID, "uid-2", []string{"default/shared"}},
			},
		},
		{
			name: "a pod released by its owner leaves that owner's index",
			ops: []op{
				{set: testPod("default", "web", "", "uid-1")},
				{set: testPod("default", "web", "")},
			},
			queries: []query{
				{IndexByOwnerUID, "uid-1", []string{}},
			},
		},
		{
			name: "an unknown index finds nothing",
			ops:  []op{{set: testPod("default", "web", "node01")}},
			queries: []query{
				{"no-such-index", "node01", []string{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache()
			c.AddIndex(IndexPodsByNode, PodNodeIndex)
			c.AddIndex(IndexByNamespace, NamespaceIndex)
			c.AddIndex(IndexByOwnerUID, OwnerUIDIndex)
			for _, o := range tt.ops {
				if o.set != nil {
					c.set(o.set)
				} else {
					c.remove(o.remove)
				}
			}
			for _, q := range tt.queries {
				if got := keysOf(c.ByIndex(q.index, q.value)); !reflect.DeepEqual(got, q.want) {
					t.Errorf("ByIndex(%q, %q) = %v, want %v", q.index, q.value, got, q.want)
				}
			}
		})
	}
}

func TestCacheSetReturnsWhatItReplaced(t *testing.T) {
	c := NewCache()
	first := testPod("default", "web", "")
	if old, existed := c.set(first); existed || old != nil {
		t.Fatalf("first set: got (%v, %v), want (nil, false)", old, existed)
	}
	second := testPod("default", "web", "node01")
	if old, existed := c.set(second); !existed || old != first {
		t.Fatalf("second set: got (%v, %v), want the first pod and true", old, existed)
	}
	if got, ok := c.Get("default/web"); !ok || got != second {
		t.Fatalf("Get after update = %v, %v; want the second pod", got, ok)
	}
	if old, ok := c.remove("default/web"); !ok || old != second {
		t.Fatalf("remove = %v, %v; want the second pod", old, ok)
	}
	if _, ok := c.Get("default/web"); ok || c.Len() != 0 {
		t.Fatalf("after remove: Get found it or Len = %d", c.Len())
	}
}

func TestCacheListIsSortedByKey(t *testing.T) {
	c := NewCache()
	for _, p := range []*corev1.Pod{
		testPod("default", "web-b", ""), testPod("a-team", "z", ""), testPod("default", "web-a", ""),
	} {
		c.set(p)
	}
	c.set(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01"}})
	want := []string{"a-team/z", "default/web-a", "default/web-b", "node01"}
	if got := keysOf(c.List()); !reflect.DeepEqual(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	if c.Len() != len(want) {
		t.Errorf("Len = %d, want %d", c.Len(), len(want))
	}
}

func TestAddIndexIndexesObjectsAlreadyInTheCache(t *testing.T) {
	c := NewCache()
	c.set(testPod("default", "web", "node01"))
	c.AddIndex(IndexPodsByNode, PodNodeIndex)
	if got := keysOf(c.ByIndex(IndexPodsByNode, "node01")); !reflect.DeepEqual(got, []string{"default/web"}) {
		t.Errorf("ByIndex after a late AddIndex = %v, want [default/web]", got)
	}
}
