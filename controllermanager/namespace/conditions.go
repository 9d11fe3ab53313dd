package namespace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions a terminating namespace's status reports, as
// kube-controller-manager's namespace deleter keeps them: each of the
// five is always there, False with its "ok" reason unless something
// holds the deletion up (kubectl describe namespace shows them).

// conditionTypes are the namespace deleter's conditions, in its order.
var conditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

// okConditions are the conditions' reason and message while nothing
// holds the deletion up.
var okConditions = map[corev1.NamespaceConditionType][2]string{
	corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
	corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
	corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
	corev1.NamespaceFinalizersRemaining:      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// deletion is what one pass over a namespace's content found.
type deletion struct {
	failures   []string       // the deletes and lists that failed
	remaining  map[string]int // objects left, by "RESOURCE.GROUP"
	finalizers map[string]int // objects left, by a finalizer they carry
	// partial: the pass stopped after the pods, which remain; what else
	// remains was not counted.
	partial bool
}

// conditions are the pass's conditions, true ones for what holds the
// deletion up.
func (d deletion) conditions() []corev1.NamespaceCondition {
	held := map[corev1.NamespaceConditionType][2]string{}
	if len(d.failures) > 0 {
		msgs := append([]string(nil), d.failures...)
		sort.Strings(msgs)
		held[corev1.NamespaceDeletionContentFailure] = [2]string{"ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(msgs), strings.Join(msgs, ", "))}
	}
	if !d.partial {
		if list := counted(d.remaining, "%s has %d resource instances"); len(list) > 0 {
			held[corev1.NamespaceContentRemaining] = [2]string{"SomeResourcesRemain", "Some resources are remaining: " + strings.Join(list, ", ")}
		}
		if list := counted(d.finalizers, "%s in %d resource instances"); len(list) > 0 {
			held[corev1.NamespaceFinalizersRemaining] = [2]string{"SomeFinalizersRemain",
				"Some content in the namespace has finalizers remaining: " + strings.Join(list, ", ")}
		}
	}
	out := make([]corev1.NamespaceCondition, 0, len(conditionTypes))
	for _, t := range conditionTypes {
		c := corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, Reason: okConditions[t][0], Message: okConditions[t][1]}
		if h, ok := held[t]; ok {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, h[0], h[1]
		}
		out = append(out, c)
	}
	return out
}

func counted(counts map[string]int, format string) []string {
	var out []string
	for name, n := range counts {
		if n > 0 {
			out = append(out, fmt.Sprintf(format, name, n))
		}
	}
	sort.Strings(out)
	return out
}

// mergeConditions puts fresh into status, keeping a condition's
// lastTransitionTime while its status holds; changed says whether
// anything is new.
func mergeConditions(status *corev1.NamespaceStatus, fresh []corev1.NamespaceCondition, now metav1.Time) (changed bool) {
	for _, f := range fresh {
		i := -1
		for j := range status.Conditions {
			if status.Conditions[j].Type == f.Type {
				i = j
			}
		}
		switch {
		case i < 0:
			f.LastTransitionTime = now
			status.Conditions = append(status.Conditions, f)
			changed = true
		case status.Conditions[i].Status != f.Status || status.Conditions[i].Reason != f.Reason || status.Conditions[i].Message != f.Message:
			f.LastTransitionTime = status.Conditions[i].LastTransitionTime
			if status.Conditions[i].Status != f.Status {
				f.LastTransitionTime = now
			}
			status.Conditions[i] = f
			changed = true
		}
	}
	return changed
}
