package namespace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What holds a deletion up is true, in the namespace deleter's words;
// the rest is false with its ok reason, and a condition's transition
// time moves only when its status does.
func TestDeletionConditions(t *testing.T) {
	d := deletion{failures: []string{"delete /api/v1/namespaces/x/secrets: boom"},
		remaining: map[string]int{"pods.": 0, "configmaps.": 2, "widgets.example.com": 1}, finalizers: map[string]int{"example.com/keep": 1}}
	want := map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "False ResourcesDiscovered All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "False ParsedGroupVersions All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "True ContentDeletionFailed Failed to delete all resource types, 1 remaining: delete /api/v1/namespaces/x/secrets: boom",
		corev1.NamespaceContentRemaining:         "True SomeResourcesRemain Some resources are remaining: configmaps. has 2 resource instances, widgets.example.com has 1 resource instances",
		corev1.NamespaceFinalizersRemaining:      "True SomeFinalizersRemain Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances",
	}
	got := d.conditions()
	if len(got) != len(want) {
		t.Fatalf("%d conditions, want %d", len(got), len(want))
	}
	for _, c := range got {
		if s := string(c.Status) + " " + c.Reason + " " + c.Message; s != want[c.Type] {
			t.Errorf("%s: %q\nwant %q", c.Type, s, want[c.Type])
		}
	}
	// A pass stopped after the pods counts nothing else.
	for _, c := range (deletion{partial: true, remaining: map[string]int{"pods.": 1}}).conditions() {
		if c.Status != corev1.ConditionFalse {
			t.Errorf("partial pass: %s is %s", c.Type, c.Status)
		}
	}

	var status corev1.NamespaceStatus
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	if !mergeConditions(&status, got, t0) || mergeConditions(&status, got, t1) {
		t.Fatal("the first merge changes the status, the same again does not")
	}
	ok := (deletion{}).conditions()
	if !mergeConditions(&status, ok, t1) {
		t.Fatal("the conditions cleared, the status changed")
	}
	for _, c := range status.Conditions {
		moved := c.Type == corev1.NamespaceDeletionContentFailure || c.Type == corev1.NamespaceContentRemaining || c.Type == corev1.NamespaceFinalizersRemaining
		if moved != c.LastTransitionTime.Equal(&t1) {
			t.Errorf("%s: transition at %v", c.Type, c.LastTransitionTime)
		}
	}
}
