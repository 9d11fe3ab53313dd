package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// resources is a ResourceList from name=quantity pairs: "cpu", "500m", ...
func resources(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// containerRange is the conformance test's LimitRange, as stored after
// defaulting: 50m-500m CPU and 100Mi-500Mi memory per container, a
// container that asks for nothing gets 100m/200Mi and is limited to
// 500m/500Mi.
func containerRange() *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:           corev1.LimitTypeContainer,
			Min:            resources("cpu", "50m", "memory", "100Mi"),
			Max:            resources("cpu", "500m", "memory", "500Mi"),
			Default:        resources("cpu", "500m", "memory", "500Mi"),
			DefaultRequest: resources("cpu", "100m", "memory", "200Mi"),
		}}}}
}

func rangeOf(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"},
		Spec: corev1.LimitRangeSpec{Limits: items}}
}

// podWith is a pod of one container "nginx" with these requests and limits.
func podWith(requests, limits corev1.ResourceList) *corev1.Pod {
	pod := newPod()
	pod.Spec.Containers = []corev1.Container{{Name: "nginx", Image: "nginx",
		Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}}
	return pod
}

func admitWithRanges(a *Attributes, ranges ...*corev1.LimitRange) error {
	list := make([]runtime.Object, len(ranges))
	for i, lr := range ranges {
		list[i] = lr
	}
	return admitLimitRanger(context.Background(), a, fakeObjects{limitRanges: list})
}

func createPod(pod *corev1.Pod, ranges ...*corev1.LimitRange) error {
	return admitWithRanges(&Attributes{Operation: Create, Resource: pods, Namespace: "default", Object: pod}, ranges...)
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if other, ok := b[name]; !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

func TestLimitRangerGivesContainersTheDefaultsTheyLeaveOut(t *testing.T) {
	tests := []struct {
		name                     string
		pod                      func() *corev1.Pod
		ranges                   []*corev1.LimitRange
		wantRequests, wantLimits corev1.ResourceList
		wantAnnotation           string
	}{
		{"a container that asks for nothing gets the default request and limit",
			func() *corev1.Pod { return podWith(nil, nil) }, []*corev1.LimitRange{containerRange()},
			resources("cpu", "100m", "memory", "200Mi"), resources("cpu", "500m", "memory", "500Mi"),
			"LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for container nginx"},
		{"what a container sets is kept, only the rest is filled (the conformance test's partial pod)",
			// The API server's defaulting has already copied the 300m limit into the request.
			func() *corev1.Pod {
				return podWith(resources("cpu", "300m", "memory", "150Mi"), resources("cpu", "300m"))
			},
			[]*corev1.LimitRange{containerRange()},
			resources("cpu", "300m", "memory", "150Mi"), resources("cpu", "300m", "memory", "500Mi"),
			"LimitRanger plugin set: memory limit for container nginx"},
		{"a container that sets everything is left alone and not annotated",
			func() *corev1.Pod {
				return podWith(resources("cpu", "100m", "memory", "200Mi"), resources("cpu", "200m", "memory", "300Mi"))
			},
			[]*corev1.LimitRange{containerRange()},
			resources("cpu", "100m", "memory", "200Mi"), resources("cpu", "200m", "memory", "300Mi"), ""},
		{"a Pod item bounds the pod but gives its containers nothing",
			func() *corev1.Pod { return podWith(resources("cpu", "1"), resources("cpu", "1")) },
			[]*corev1.LimitRange{rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: resources("cpu", "2")})},
			resources("cpu", "1"), resources("cpu", "1"), ""},
		{"no LimitRange, no change", func() *corev1.Pod { return podWith(nil, nil) }, nil, nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod()
			if err := createPod(pod, tc.ranges...); err != nil {
				t.Fatal(err)
			}
			got := pod.Spec.Containers[0].Resources
			if !sameResources(got.Requests, tc.wantRequests) || !sameResources(got.Limits, tc.wantLimits) {
				t.Errorf("got requests %v, limits %v; want %v, %v", got.Requests, got.Limits, tc.wantRequests, tc.wantLimits)
			}
			if a := pod.Annotations[limitRangerAnnotation]; a != tc.wantAnnotation {
				t.Errorf("annotation: got %q, want %q", a, tc.wantAnnotation)
			}
		})
	}
}

func TestLimitRangerDefaultsInitContainersAndSaysSo(t *testing.T) {
	pod := podWith(resources("cpu", "100m", "memory", "200Mi"), resources("cpu", "500m", "memory", "500Mi"))
	pod.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
	if err := createPod(pod, containerRange()); err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.InitContainers[0].Resources.Limits; !sameResources(got, resources("cpu", "500m", "memory", "500Mi")) {
		t.Errorf("init container limits: %v", got)
	}
	want := "LimitRanger plugin set: cpu, memory request for init container setup; cpu, memory limit for init container setup"
	if got := pod.Annotations[limitRangerAnnotation]; got != want {
		t.Errorf("annotation: got %q, want %q", got, want)
	}
}

func TestLimitRangerRefusesWhatIsOutsideTheBoundsWithKubernetesMessages(t *testing.T) {
	const prefix = `pods "web" is forbidden: `
	tests := []struct {
		name    string
		pod     *corev1.Pod
		lr      *corev1.LimitRange
		wantErr string
	}{
		{"a limit above max", podWith(resources("cpu", "100m"), resources("cpu", "800m")),
			rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: resources("cpu", "500m")}),
			"maximum cpu usage per Container is 500m, but limit is 800m"},
		{"a request below min, after the defaults gave it a limit (the conformance test's small pod)",
			podWith(resources("cpu", "10m", "memory", "50Mi"), nil), containerRange(),
			"[minimum cpu usage per Container is 50m, but request is 10m, minimum memory usage per Container is 100Mi, but request is 50Mi]"},
		{"a request above max, with the default limit (the conformance test's big pod)",
			podWith(resources("cpu", "600m"), nil), containerRange(),
			"maximum cpu usage per Container is 500m, but request is 600m"},
		{"max without a default: the container must set a limit",
			podWith(nil, nil), rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: resources("memory", "1Gi")}),
			"maximum memory usage per Container is 1Gi.  No limit is specified"},
		{"min without a default: the container must set a request",
			podWith(nil, nil), rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: resources("memory", "1Mi")}),
			"minimum memory usage per Container is 1Mi.  No request is specified"},
		{"a limit too far above the request",
			podWith(resources("cpu", "250m"), resources("cpu", "1")),
			rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: resources("cpu", "2")}),
			"cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"},
		{"a ratio needs a request",
			podWith(nil, resources("cpu", "1")),
			rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: resources("cpu", "2")}),
			"cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"},
		{"a Pod item counts the containers together",
			func() *corev1.Pod {
				pod := podWith(resources("cpu", "1"), resources("cpu", "1"))
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: resources("cpu", "1"), Limits: resources("cpu", "1500m")}})
				return pod
			}(),
			rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: resources("cpu", "2")}),
			"maximum cpu usage per Pod is 2, but limit is 2500m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := createPod(tc.pod, tc.lr)
			if !apierrors.IsForbidden(err) || err.Error() != prefix+tc.wantErr {
				t.Fatalf("got %v, want 403 %q", err, prefix+tc.wantErr)
			}
		})
	}
}

func TestLimitRangerBoundsClaimsByTheirStorageRequest(t *testing.T) {
	claimRange := rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim,
		Min: resources("storage", "1Gi"), Max: resources("storage", "10Gi")})
	claim := func(size string) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}
		if size != "" {
			pvc.Spec.Resources.Requests = resources("storage", size)
		}
		return pvc
	}
	tests := []struct {
		name, size string
		op         Operation
		wantErr    string
	}{
		{"a claim within the bounds", "5Gi", Create, ""},
		{"a claim too big", "20Gi", Create, `persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`},
		{"a claim too small", "500Mi", Create, `persistentvolumeclaims "data" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`},
		{"a claim resized beyond max", "11Gi", Update, `persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 11Gi`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Attributes{Operation: tc.op, Resource: persistentVolumeClaims, Namespace: "default", Object: claim(tc.size)}
			if tc.op == Update {
				a.OldObject = claim("5Gi")
			}
			err := admitWithRanges(a, claimRange)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("got %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestLimitRangerLeavesAloneWhatItDoesNotJudge(t *testing.T) {
	strict := rangeOf(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: resources("cpu", "1m")})
	now := metav1.Now()
	deleting := podWith(nil, nil)
	deleting.DeletionTimestamp = &now
	tests := []struct {
		name string
		a    *Attributes
	}{
		{"a pod update: its containers cannot change",
			&Attributes{Operation: Update, Resource: pods, Namespace: "default", Object: podWith(nil, nil), OldObject: podWith(nil, nil)}},
		{"a pod's status", &Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default",
			Object: podWith(nil, nil), OldObject: podWith(nil, nil)}},
		{"a claim being deleted", &Attributes{Operation: Update, Resource: persistentVolumeClaims, Namespace: "default",
			Object: &corev1.PersistentVolumeClaim{}, OldObject: &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}}},
		{"another kind", &Attributes{Operation: Create, Resource: namespaces, Object: &corev1.Namespace{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := admitWithRanges(tc.a, strict); err != nil {
				t.Fatal(err)
			}
			if pod, ok := tc.a.Object.(*corev1.Pod); ok && pod.Annotations[limitRangerAnnotation] != "" {
				t.Fatalf("annotated: %v", pod.Annotations)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
