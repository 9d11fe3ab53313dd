package daemon

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestTemplatePatchReplacesTheWholeTemplateWithSortedKeys(t *testing.T) {
	ds := testDS()
	ds.Spec.MinReadySeconds = 5 // outside the template: not recorded
	got, err := templatePatch(ds)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"image":"agent:1","name":"agent","resources":{}}]}}}}`
	if string(got) != want {
		t.Errorf("patch\n %s\nwant\n %s", got, want)
	}
	rev := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: got}}
	if ok, _ := matches(ds, rev); !ok {
		t.Error("a DaemonSet does not match the revision of its own template")
	}
	ds.Spec.Template.Spec.Containers[0].Image = "agent:2"
	if ok, _ := matches(ds, rev); ok {
		t.Error("a new image matches the old revision")
	}
}

func TestTemplateHash(t *testing.T) {
	ds := testDS()
	base := templateHash(&ds.Spec.Template, nil)
	tests := []struct {
		name  string
		hash  string
		equal bool
	}{
		{"the same template hashes the same", templateHash(&testDS().Spec.Template, nil), true},
		{"a collision count of 0 is a salt too", templateHash(&ds.Spec.Template, ptr.To[int32](0)), false},
		{"each collision count gives another hash", templateHash(&ds.Spec.Template, ptr.To[int32](1)), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.hash == base) != tc.equal {
				t.Errorf("hash %s vs %s: equal = %v, want %v", tc.hash, base, tc.hash == base, tc.equal)
			}
		})
	}
	other := testDS()
	other.Spec.Template.Spec.Containers[0].Image = "agent:2"
	if templateHash(&other.Spec.Template, nil) == base {
		t.Error("another template has the same hash")
	}
	if templateHash(&ds.Spec.Template, ptr.To[int32](0)) == templateHash(&ds.Spec.Template, ptr.To[int32](1)) {
		t.Error("collision counts 0 and 1 give the same hash")
	}
}
