package apps

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestControllerRevisionsAreValidatedAsKubernetesDoes(t *testing.T) {
	valid := func() *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-6d4b8f", Namespace: "default"},
			Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)}, Revision: 1}
	}
	tests := []struct {
		name   string
		change func(cr *appsv1.ControllerRevision)
		update bool // validate as an update of valid()
		field  string
		detail string
	}{
		{"a revision with data is valid", func(*appsv1.ControllerRevision) {}, false, "", ""},
		{"data is mandatory", func(cr *appsv1.ControllerRevision) { cr.Data = runtime.RawExtension{} }, false, "data", "data is mandatory"},
		{"the revision is never negative", func(cr *appsv1.ControllerRevision) { cr.Revision = -1 }, false,
			"revision", "must be greater than or equal to 0"},
		{"the number may change", func(cr *appsv1.ControllerRevision) { cr.Revision = 3 }, true, "", ""},
		{"the data may not", func(cr *appsv1.ControllerRevision) { cr.Data.Raw = []byte(`{"spec":{}}`) }, true, "data", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cr := valid()
			tc.change(cr)
			var old runtime.Object
			if tc.update {
				old = valid()
			}
			errs := ControllerRevisions.Validate(cr, old)
			if tc.field == "" {
				if len(errs) != 0 {
					t.Fatalf("valid revision refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), tc.detail) {
				t.Fatalf("errors = %v, want one on %s saying %q", errs, tc.field, tc.detail)
			}
		})
	}
}

func TestControllerRevisionsPrintTheirController(t *testing.T) {
	cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-6d4b8f", CreationTimestamp: metav1.Now()}, Revision: 2}
	if got := ControllerRevisions.Row(cr, time.Now())[0]; got != "<none>" {
		t.Errorf("an orphan revision's controller = %v, want <none>", got)
	}
	cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "web", Controller: new(true)}}
	if got := ControllerRevisions.Row(cr, time.Now())[0]; got != "daemonset.apps/web" {
		t.Errorf("controller = %v, want daemonset.apps/web", got)
	}
}
