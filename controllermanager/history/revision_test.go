package history

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func raw(s string) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(s)}}
}

func TestHashIsKubernetesFNV32OfTheDataAndTheDecimalProbe(t *testing.T) {
	// The expected values are FNV-1 (32 bit) of the bytes, computed
	// independently, then SafeEncodeString: Kubernetes names a revision of
	// the same data the same way.
	for _, tc := range []struct {
		name  string
		data  string
		probe *int32
		want  string
	}{
		{"no collision count hashes the data alone", `{"a":1}`, nil, "69966c9df7"},
		{"a collision count of 0 is hashed as the digit 0", `{"a":1}`, ptr.To[int32](0), "d55c4ff5f"},
		{"each collision count gives another name", `{"a":1}`, ptr.To[int32](1), "d55c4ff5d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hash(raw(tc.data), tc.probe); got != tc.want {
				t.Errorf("Hash(%s, %v) = %q, want %q", tc.data, tc.probe, got, tc.want)
			}
		})
	}
}

func TestName(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, want string
	}{
		{"the owner's name and the hash", "web", "web-abc"},
		{"a prefix longer than 223 bytes is cut so the name fits 253", strings.Repeat("x", 300), strings.Repeat("x", 223) + "-abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Name(tc.prefix, "abc"); got != tc.want {
				t.Errorf("Name = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewLabelsAndOwnsTheRevision(t *testing.T) {
	parent := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "uid-1"}}
	tmplLabels := map[string]string{"app": "db"}
	rev := New(parent, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), tmplLabels, runtime.RawExtension{Raw: []byte(`{"a":1}`)}, 3, nil)
	if rev.Name != "db-69966c9df7" || rev.Namespace != "ns" || rev.Revision != 3 {
		t.Errorf("got %s/%s revision %d, want ns/db-69966c9df7 revision 3", rev.Namespace, rev.Name, rev.Revision)
	}
	if rev.Labels["app"] != "db" || rev.Labels[HashLabel] != "69966c9df7" {
		t.Errorf("labels %v: want the template's and %s", rev.Labels, HashLabel)
	}
	if _, ok := tmplLabels[HashLabel]; ok {
		t.Error("New wrote into the template's labels")
	}
	if ref := metav1.GetControllerOf(rev); ref == nil || ref.UID != "uid-1" || ref.Kind != "StatefulSet" {
		t.Errorf("controller ref %+v, want the StatefulSet", ref)
	}
}

func TestEqualAndFindEqualCompareTheSnapshots(t *testing.T) {
	a, a2, b := raw(`{"x":1}`), raw(`{"x":1}`), raw(`{"x":2}`)
	a2.Name, a2.Revision = "other-name", 7 // name and number do not matter
	for _, tc := range []struct {
		name string
		l, r *appsv1.ControllerRevision
		want bool
	}{
		{"the same data under another name and number is equal", a, a2, true},
		{"other data is not", a, b, false},
		{"nil equals only nil", nil, nil, true},
		{"nil is not a revision", a, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Equal(tc.l, tc.r); got != tc.want {
				t.Errorf("Equal = %v, want %v", got, tc.want)
			}
		})
	}
	if got := FindEqual([]*appsv1.ControllerRevision{b, a2, a}, a); len(got) != 2 || got[0] != a2 || got[1] != a {
		t.Errorf("FindEqual = %v, want [a2 a] in their order", got)
	}
}

func TestSortOrdersByRevisionThenAgeThenName(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(1000, 0))
	t1 := metav1.NewTime(time.Unix(2000, 0))
	rev := func(name string, n int64, at metav1.Time) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at}, Revision: n}
	}
	revs := []*appsv1.ControllerRevision{rev("c", 2, t0), rev("b", 1, t1), rev("z", 1, t0), rev("a", 1, t0)}
	Sort(revs)
	var got []string
	for _, r := range revs {
		got = append(got, r.Name)
	}
	if want := "a z b c"; strings.Join(got, " ") != want {
		t.Errorf("sorted %v, want %s", got, want)
	}
	if MaxRevision(revs) != 2 || MaxRevision(nil) != 0 {
		t.Errorf("MaxRevision = %d (of nil: %d), want 2 (0)", MaxRevision(revs), MaxRevision(nil))
	}
}
