package history

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"maps"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
)

// HashLabel carries a revision's hash, the suffix of its name
// (controller.kubernetes.io/hash, as Kubernetes' NewControllerRevision
// sets it). DaemonSets label their revisions and pods with their own
// controller-revision-hash instead (appsv1.DefaultDaemonSetUniqueLabelKey).
const HashLabel = "controller.kubernetes.io/hash"

// maxPrefix keeps Name within a DNS subdomain's 253 bytes: the prefix, a
// dash and a hash of at most 29 characters.
const maxPrefix = 223

// Name is a revision's name: <prefix>-<hash>, the prefix (the owner's
// name) cut to 223 bytes.
func Name(prefix, hash string) string {
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + "-" + hash
}

// Hash is Kubernetes' HashControllerRevision: FNV-32 of the revision's
// Data.Raw, then of the decimal collision count (probe) if any, encoded
// with apimachinery's SafeEncodeString (no vowels, so no words). Only raw
// data is hashed: mkube's controllers always store Data as JSON bytes.
// A collision (two templates, one name) is resolved by bumping probe,
// which changes the name.
func Hash(rev *appsv1.ControllerRevision, probe *int32) string {
	h := fnv.New32()
	h.Write(rev.Data.Raw)
	if probe != nil {
		h.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// New is Kubernetes' NewControllerRevision: a revision of data numbered
// revision, controlled by parent, labelled with the template's labels (so
// the parent's selector finds it) plus HashLabel, and named after parent
// and its hash.
func New(parent metav1.Object, parentKind schema.GroupVersionKind, templateLabels map[string]string,
	data runtime.RawExtension, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	labels := maps.Clone(templateLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       parent.GetNamespace(),
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, parentKind)},
		},
		Data:     data,
		Revision: revision,
	}
	hash := Hash(rev, collisionCount)
	rev.Name = Name(parent.GetName(), hash)
	rev.Labels[HashLabel] = hash
	return rev
}

// Equal reports whether two revisions record the same template (both nil
// counts as equal).
func Equal(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// FindEqual returns the revisions equal to needle, in their order.
func FindEqual(revs []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, r := range revs {
		if Equal(r, needle) {
			out = append(out, r)
		}
	}
	return out
}

// Sort orders revisions oldest first: by Revision, ties broken by
// creation time, then name (Kubernetes' SortControllerRevisions).
func Sort(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// MaxRevision is the highest Revision among revs, 0 if none.
func MaxRevision(revs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, r := range revs {
		m = max(m, r.Revision)
	}
	return m
}
