package apps

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// newStatefulSet is web: three replicas of nginx with one claim template
// ("www"), mounted by the container, defaulted as the server stores it.
func newStatefulSet() *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](3),
			ServiceName: "nginx",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25",
					VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}}}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "www"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			}},
		},
	}
	StatefulSets.Default(sts)
	return sts
}

func TestStatefulSetsAreDefaultedAsKubernetesDoes(t *testing.T) {
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}}
	StatefulSets.Default(sts)
	s := sts.Spec
	checks := []struct {
		name      string
		got, want any
	}{
		{"one replica", *s.Replicas, int32(1)},
		{"pods are made in order", s.PodManagementPolicy, appsv1.OrderedReadyPodManagement},
		{"the update strategy rolls", s.UpdateStrategy.Type, appsv1.RollingUpdateStatefulSetStrategyType},
		{"from partition 0", *s.UpdateStrategy.RollingUpdate.Partition, int32(0)},
		{"one pod at a time (MaxUnavailableStatefulSet is on in 1.37)", *s.UpdateStrategy.RollingUpdate.MaxUnavailable, intstr.FromInt32(1)},
		{"ten old revisions are kept", *s.RevisionHistoryLimit, int32(10)},
		{"claims are kept when the set is deleted", s.PersistentVolumeClaimRetentionPolicy.WhenDeleted, appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{"and when it scales down", s.PersistentVolumeClaimRetentionPolicy.WhenScaled, appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{"the template's pods always restart", s.Template.Spec.RestartPolicy, corev1.RestartPolicyAlways},
		{"a claim template is a filesystem", *s.VolumeClaimTemplates[0].Spec.VolumeMode, corev1.PersistentVolumeFilesystem},
		{"and Pending, as a new claim", s.VolumeClaimTemplates[0].Status.Phase, corev1.ClaimPending},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}

	onDelete := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}}
	StatefulSets.Default(onDelete)
	if onDelete.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Errorf("OnDelete got a rollingUpdate block: %+v", onDelete.Spec.UpdateStrategy.RollingUpdate)
	}
	bare := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}}}
	StatefulSets.Default(bare)
	if bare.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Errorf("an explicit RollingUpdate without a block got one: %+v", bare.Spec.UpdateStrategy.RollingUpdate)
	}
}

func TestStatefulSetsAreValidatedAsKubernetesDoes(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *appsv1.StatefulSet)
		field  string // "" = valid
		detail string
	}{
		{"the example set is valid", func(*appsv1.StatefulSet) {}, "", ""},
		{"a set needs no governing service", func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "" }, "", ""},
		{"a hostname in the template is ignored: the controller sets it", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Hostname = "Not_A_Label" }, "", ""},
		{"the management policy is OrderedReady or Parallel", func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Random" },
			"spec.podManagementPolicy", "must be 'OrderedReady' or 'Parallel'"},
		{"the update strategy is RollingUpdate or OnDelete", func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RecreateStatefulSetStrategyType}
		}, "spec.updateStrategy", "must be 'RollingUpdate' or 'OnDelete'"},
		{"OnDelete takes no rollingUpdate block", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType },
			"spec.updateStrategy.rollingUpdate", "only allowed for updateStrategy 'RollingUpdate'"},
		{"a negative partition is invalid", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](-1) },
			"spec.updateStrategy.rollingUpdate.partition", "must be greater than or equal to 0"},
		{"maxUnavailable cannot be 0", func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("0%"))
		},
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "cannot be 0"},
		{"maxUnavailable is at most 100%", func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("120%"))
		},
			"spec.updateStrategy.rollingUpdate.maxUnavailable", "must not be greater than 100%"},
		{"a retention policy is Retain or Delete", func(s *appsv1.StatefulSet) { s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = "Keep" },
			"spec.persistentVolumeClaimRetentionPolicy.whenScaled", `Unsupported value: "Keep"`},
		{"a claim template needs a size", func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests = nil },
			"spec.volumeClaimTemplates[0].spec.resources[storage]", "Required value"},
		{"negative replicas are invalid", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](-1) },
			"spec.replicas", "must be greater than or equal to 0"},
		{"a negative start ordinal is invalid", func(s *appsv1.StatefulSet) { s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: -1} },
			"spec.ordinals.start", "must be greater than or equal to 0"},
		{"the service name is a DNS label", func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "Nginx" },
			"spec.serviceName", "a lowercase RFC 1123 label"},
		{"a selector is required", func(s *appsv1.StatefulSet) { s.Spec.Selector = nil }, "spec.selector", "Required value"},
		{"an empty selector selects everything, which no set may", func(s *appsv1.StatefulSet) { s.Spec.Selector = &metav1.LabelSelector{} },
			"spec.selector", "empty selector is invalid for statefulset"},
		{"the selector matches the template", func(s *appsv1.StatefulSet) { s.Spec.Template.Labels = map[string]string{"app": "web"} },
			"spec.template.metadata.labels", "`selector` does not match template `labels`"},
		{"the pods always restart", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			"spec.template.spec.restartPolicy", `Unsupported value: "OnFailure"`},
		{"a stateful pod never times out", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			"spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in StatefulSet is not Supported"},
		{"the template's containers are checked", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "" },
			"spec.template.spec.containers[0].image", "Required value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sts := newStatefulSet()
			tc.change(sts)
			expectOneError(t, StatefulSets.Validate(sts, nil), tc.field, tc.detail)
		})
	}
}

func TestStatefulSetUpdatesKeepTheSetsIdentity(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *appsv1.StatefulSet)
		field  string // "" = allowed
	}{
		{"scaling is allowed", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](5) }, ""},
		{"a new template is allowed", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:1.26" }, ""},
		{"a new partition is allowed", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2) }, ""},
		{"OnDelete instead of RollingUpdate is allowed", func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, ""},
		{"new ordinals are allowed", func(s *appsv1.StatefulSet) { s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 3} }, ""},
		{"minReadySeconds may change", func(s *appsv1.StatefulSet) { s.Spec.MinReadySeconds = 10 }, ""},
		{"the retention policy may change", func(s *appsv1.StatefulSet) {
			s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		}, ""},
		{"the selector may not", func(s *appsv1.StatefulSet) {
			s.Spec.Selector.MatchLabels["tier"] = "web"
			s.Spec.Template.Labels["tier"] = "web"
		}, "spec.selector"},
		{"the claim templates may not", func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, "spec.volumeClaimTemplates"},
		{"the service name may not", func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "web" }, "spec.serviceName"},
		{"the management policy may not", func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }, "spec.podManagementPolicy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sts := newStatefulSet()
			tc.change(sts)
			detail := ""
			if tc.field != "" {
				detail = "field is immutable"
			}
			expectOneError(t, StatefulSets.Validate(sts, newStatefulSet()), tc.field, detail)
		})
	}
}

func TestStatefulSetStatusWritesAreValidated(t *testing.T) {
	tests := []struct {
		name   string
		status appsv1.StatefulSetStatus
		field  string
		detail string
	}{
		{"a consistent status is accepted", appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 2, CollisionCount: ptr.To[int32](2)}, "", ""},
		{"more ready pods than pods", appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 2, CollisionCount: ptr.To[int32](2)},
			"status.readyReplicas", "cannot be greater than status.replicas"},
		{"more available pods than ready ones", appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 2, CollisionCount: ptr.To[int32](2)},
			"status.availableReplicas", "cannot be greater than status.readyReplicas"},
		{"the collision count never goes down", appsv1.StatefulSetStatus{Replicas: 3, CollisionCount: ptr.To[int32](1)},
			"status.collisionCount", "cannot be decremented"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cur := newStatefulSet()
			cur.Status.CollisionCount = ptr.To[int32](2)
			next := newStatefulSet()
			next.Spec.Replicas = ptr.To[int32](9) // a status write never changes the spec
			next.Labels = map[string]string{"e2e": "testing"}
			next.Status = tc.status
			out, errs := StatefulSets.Subresources[0].Update(cur, next, time.Time{})
			expectOneError(t, errs, tc.field, tc.detail)
			got := out.(*appsv1.StatefulSet)
			if *got.Spec.Replicas != 3 || got.Labels["e2e"] != "testing" {
				t.Errorf("status write: replicas %d, labels %v; want the stored spec and the new labels", *got.Spec.Replicas, got.Labels)
			}
		})
	}
}

func TestStatefulSetsPrintReadyOverDesired(t *testing.T) {
	sts := newStatefulSet()
	sts.CreationTimestamp = metav1.NewTime(time.Now().Add(-90 * time.Second))
	sts.Status.ReadyReplicas = 2
	got := StatefulSets.Row(sts, time.Now())
	want := []any{"2/3", "90s", "nginx", "nginx:1.25"}
	if len(got) != len(want) {
		t.Fatalf("row %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d (%s) = %v, want %v", i, statefulSetColumns[i].Name, got[i], want[i])
		}
	}
}

// expectOneError checks errs is empty (path "") or one error on path
// whose message contains detail.
func expectOneError(t *testing.T, errs field.ErrorList, path, detail string) {
	t.Helper()
	if path == "" {
		if len(errs) != 0 {
			t.Fatalf("refused: %v", errs)
		}
		return
	}
	if len(errs) != 1 || errs[0].Field != path || !strings.Contains(errs[0].Error(), detail) {
		t.Fatalf("errors = %v, want one on %s saying %q", errs, path, detail)
	}
}
