package apps

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// newDaemonSet is fluentd, one pod per node, defaulted as the server
// stores it.
func newDaemonSet() *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fluentd", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "fluentd"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "fluentd"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fluentd", Image: "fluentd:v1"}}},
			},
		},
	}
	DaemonSets.Default(ds)
	return ds
}

func TestDaemonSetsAreDefaultedAsKubernetesDoes(t *testing.T) {
	ds := &appsv1.DaemonSet{}
	DaemonSets.Default(ds)
	s := ds.Spec
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"the update strategy rolls", s.UpdateStrategy.Type, appsv1.RollingUpdateDaemonSetStrategyType},
		{"one node at a time", *s.UpdateStrategy.RollingUpdate.MaxUnavailable, intstr.FromInt32(1)},
		{"without surging", *s.UpdateStrategy.RollingUpdate.MaxSurge, intstr.FromInt32(0)},
		{"ten old templates are kept", *s.RevisionHistoryLimit, int32(10)},
		{"the template's pods always restart", s.Template.Spec.RestartPolicy, corev1.RestartPolicyAlways},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	onDelete := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}
	DaemonSets.Default(onDelete)
	if onDelete.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Errorf("OnDelete got a rollingUpdate block: %+v", onDelete.Spec.UpdateStrategy.RollingUpdate)
	}
}

func TestDaemonSetsAreValidatedAsKubernetesDoes(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }
	num := func(n int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(n)) }
	tests := []struct {
		name         string
		change       func(ds *appsv1.DaemonSet)
		path, detail string // "" = valid
	}{
		{"fluentd is valid", func(*appsv1.DaemonSet) {}, "", ""},
		{"a missing selector matches no pod, so not the template", func(ds *appsv1.DaemonSet) { ds.Spec.Selector = nil },
			"spec.template.metadata.labels", "`selector` does not match template `labels`"},
		{"the selector must match the template's labels", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Labels = map[string]string{"name": "other"} },
			"spec.template.metadata.labels", "`selector` does not match template `labels`"},
		{"an empty selector would select every pod", func(ds *appsv1.DaemonSet) { ds.Spec.Selector = &metav1.LabelSelector{} },
			"spec.selector", "empty selector is invalid for daemonset"},
		{"a daemon always restarts", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			"spec.template.spec.restartPolicy", `supported values: "Always"`},
		{"a daemon has no deadline", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) },
			"spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in DaemonSet is not Supported"},
		{"the template is a valid pod", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers = nil },
			"spec.template.spec.containers", "Required value"},
		{"minReadySeconds is not negative", func(ds *appsv1.DaemonSet) { ds.Spec.MinReadySeconds = -1 },
			"spec.minReadySeconds", "must be greater than or equal to 0"},
		{"revisionHistoryLimit is not negative", func(ds *appsv1.DaemonSet) { ds.Spec.RevisionHistoryLimit = ptr.To[int32](-1) },
			"spec.revisionHistoryLimit", "must be greater than or equal to 0"},
		{"zero history is fine", func(ds *appsv1.DaemonSet) { ds.Spec.RevisionHistoryLimit = ptr.To[int32](0) }, "", ""},
		{"OnDelete needs no rollingUpdate", func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
		}, "", ""},
		{"an unknown strategy type", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.Type = "Recreate" },
			"spec.updateStrategy", `supported values: "RollingUpdate", "OnDelete"`},
		{"RollingUpdate needs its parameters", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate = nil },
			"spec.updateStrategy.rollingUpdate", "Required value"},
		{"surging alone is fine", func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: num(0), MaxSurge: pct("20%")}
		}, "", ""},
		{"surge and unavailability together are not", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = num(1) },
			"spec.updateStrategy.rollingUpdate.maxSurge", "may not be set when maxUnavailable is non-zero"},
		{"neither is not either", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = pct("0%") },
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "cannot be 0 when maxSurge is 0"},
		{"at most 100% unavailable", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = pct("150%") },
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "must not be greater than 100%"},
		{"a percentage is digits and %", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = pct("ten%") },
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "a valid percent string"},
		{"a negative maxUnavailable", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = num(-1) },
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "must be greater than or equal to 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := newDaemonSet()
			tc.change(ds)
			errs := DaemonSets.Validate(ds, nil)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("valid DaemonSet refused: %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.path && strings.Contains(e.Error(), tc.detail) {
					return
				}
			}
			t.Fatalf("errors = %v, want one on %s saying %q", errs, tc.path, tc.detail)
		})
	}
}

func TestADaemonSetsSelectorIsImmutable(t *testing.T) {
	old, ds := newDaemonSet(), newDaemonSet()
	ds.Spec.Selector.MatchLabels["tier"] = "logging"
	ds.Spec.Template.Labels["tier"] = "logging"
	errs := DaemonSets.Validate(ds, old)
	if len(errs) != 1 || errs[0].Field != "spec.selector" || !strings.Contains(errs[0].Error(), "field is immutable") {
		t.Fatalf("errors = %v, want spec.selector: field is immutable", errs)
	}
	ds = newDaemonSet()
	ds.Spec.Template.Spec.Containers[0].Image = "fluentd:v2"
	if errs := DaemonSets.Validate(ds, old); len(errs) != 0 {
		t.Fatalf("a new image refused: %v", errs)
	}
}

func TestDaemonSetStatusWritesAreValidated(t *testing.T) {
	old := newDaemonSet()
	old.Status.CollisionCount = ptr.To[int32](2)
	for _, tc := range []struct {
		name         string
		status       appsv1.DaemonSetStatus
		path, detail string
	}{
		{"counts are not negative", appsv1.DaemonSetStatus{NumberReady: -1, CollisionCount: ptr.To[int32](2)}, "status.numberReady", "must be greater than or equal to 0"},
		{"collisionCount never goes down", appsv1.DaemonSetStatus{CollisionCount: ptr.To[int32](1)}, "status.collisionCount", "cannot be decremented"},
		{"nor disappears", appsv1.DaemonSetStatus{}, "status.collisionCount", "cannot be decremented"},
		{"it may go up", appsv1.DaemonSetStatus{CollisionCount: ptr.To[int32](3), NumberReady: 2}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := old.DeepCopy()
			next.Status = tc.status
			next.Spec.MinReadySeconds = 30 // ignored: a status write keeps the spec
			out, errs := updateDaemonSetStatus(old, next, time.Time{})
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				if ds := out.(*appsv1.DaemonSet); ds.Spec.MinReadySeconds != 0 || ds.Status.NumberReady != 2 {
					t.Errorf("status write stored spec %+v, status %+v", ds.Spec.MinReadySeconds, ds.Status)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.path || !strings.Contains(errs[0].Error(), tc.detail) {
				t.Fatalf("errors = %v, want %s: %s", errs, tc.path, tc.detail)
			}
		})
	}
}

func TestDaemonSetsPrintAsKubectlShowsThem(t *testing.T) {
	ds := newDaemonSet()
	ds.CreationTimestamp = metav1.NewTime(time.Unix(0, 0))
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 1, NumberAvailable: 2}
	var names []string
	for _, c := range DaemonSets.Columns {
		names = append(names, strings.ToUpper(c.Name))
	}
	if got, want := strings.Join(names, ","), "DESIRED,CURRENT,READY,UP-TO-DATE,AVAILABLE,NODE SELECTOR,AGE,CONTAINERS,IMAGES,SELECTOR"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	row := DaemonSets.Row(runtime.Object(ds), time.Unix(120, 0))
	want := []any{int64(3), int64(3), int64(2), int64(1), int64(2), "kubernetes.io/os=linux", "2m", "fluentd", "fluentd:v1", "name=fluentd"}
	for i := range want {
		if row[i] != want[i] {
			t.Errorf("cell %d (%s) = %v, want %v", i, DaemonSets.Columns[i].Name, row[i], want[i])
		}
	}
	ds.Spec.Template.Spec.NodeSelector = nil
	if got := DaemonSets.Row(ds, time.Unix(120, 0))[5]; got != "<none>" {
		t.Errorf("no node selector prints %v, want <none>", got)
	}
}
