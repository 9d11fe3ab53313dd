package admission

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestRuntimeClassAdmission(t *testing.T) {
	overhead := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("1Mi")}
	gpuToleration := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	objs := fakeObjects{runtimeClasses: {
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "runc"}, Handler: "runc"},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata", Overhead: &nodev1.Overhead{PodFixed: overhead}},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Handler: "nvidia", Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{"accelerator": "nvidia"}, Tolerations: []corev1.Toleration{gpuToleration}}},
	}}
	tests := []struct {
		name    string
		pod     func(p *corev1.Pod)
		wantErr string // "" admits
		check   func(t *testing.T, p *corev1.Pod)
	}{
		{"a pod without a class is left alone", func(p *corev1.Pod) {}, "", func(t *testing.T, p *corev1.Pod) {
			if p.Spec.Overhead != nil || p.Spec.NodeSelector != nil {
				t.Errorf("overhead %v, nodeSelector %v", p.Spec.Overhead, p.Spec.NodeSelector)
			}
		}},
		{"a class without overhead sets none", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("runc") }, "",
			func(t *testing.T, p *corev1.Pod) {
				if len(p.Spec.Overhead) != 0 {
					t.Errorf("overhead %v", p.Spec.Overhead)
				}
			}},
		{"a class that does not exist is refused", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("foo") },
			`pod rejected: RuntimeClass "foo" not found`, nil},
		{"the class's overhead becomes the pod's", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("kata") }, "",
			func(t *testing.T, p *corev1.Pod) {
				if !apiequality.Semantic.DeepEqual(p.Spec.Overhead, overhead) {
					t.Errorf("overhead %v, want %v", p.Spec.Overhead, overhead)
				}
			}},
		{"a pod that states the class's overhead itself is admitted", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName, p.Spec.Overhead = ptr.To("kata"), overhead.DeepCopy()
		}, "", nil},
		{"a pod whose overhead differs from its class's is refused", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr.To("kata")
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead", nil},
		{"a pod with an overhead and a class without one is refused", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr.To("runc")
			p.Spec.Overhead = overhead.DeepCopy()
		}, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead", nil},
		{"a pod with an overhead and no class is refused", func(p *corev1.Pod) { p.Spec.Overhead = overhead.DeepCopy() },
			"pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead", nil},
		{"the class's nodeSelector and tolerations join the pod's", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr.To("gpu")
			p.Spec.NodeSelector = map[string]string{"zone": "a"}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml"}}
		}, "", func(t *testing.T, p *corev1.Pod) {
			if p.Spec.NodeSelector["zone"] != "a" || p.Spec.NodeSelector["accelerator"] != "nvidia" {
				t.Errorf("nodeSelector %v", p.Spec.NodeSelector)
			}
			if len(p.Spec.Tolerations) != 2 || p.Spec.Tolerations[1] != gpuToleration {
				t.Errorf("tolerations %v", p.Spec.Tolerations)
			}
		}},
		{"a pod without a nodeSelector gets the class's", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("gpu") }, "",
			func(t *testing.T, p *corev1.Pod) {
				if len(p.Spec.NodeSelector) != 1 || p.Spec.NodeSelector["accelerator"] != "nvidia" {
					t.Errorf("nodeSelector %v", p.Spec.NodeSelector)
				}
			}},
		{"a nodeSelector that contradicts the class's is refused", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr.To("gpu")
			p.Spec.NodeSelector = map[string]string{"accelerator": "amd"}
		}, "conflict: runtimeClass.scheduling.nodeSelector[accelerator] = nvidia; pod.spec.nodeSelector[accelerator] = amd", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod()
			tc.pod(pod)
			err := RuntimeClass.Admit(context.Background(), &Attributes{Operation: Create, Resource: pods, Namespace: pod.Namespace, Object: pod}, objs)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.check != nil {
					tc.check(t, pod)
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want 403 with %q", err, tc.wantErr)
			}
		})
	}
}

func TestTolerationsAreMergedWithoutTheOnesAlreadyCovered(t *testing.T) {
	exists := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}
	equal := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "a100", Effect: corev1.TaintEffectNoSchedule}
	other := corev1.Toleration{Key: "zone", Operator: corev1.TolerationOpEqual, Value: "a"}
	forever := corev1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	fiveMinutes := forever
	fiveMinutes.TolerationSeconds = ptr.To[int64](300)
	tests := []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint lists are concatenated", []corev1.Toleration{other}, []corev1.Toleration{equal}, []corev1.Toleration{other, equal}},
		{"Exists on a key covers Equal on it, whichever list it is in", []corev1.Toleration{equal}, []corev1.Toleration{exists},
			[]corev1.Toleration{exists}},
		{"a toleration in both lists is kept once", []corev1.Toleration{other}, []corev1.Toleration{other}, []corev1.Toleration{other}},
		{"tolerating a NoExecute taint forever covers tolerating it for five minutes", []corev1.Toleration{fiveMinutes},
			[]corev1.Toleration{forever}, []corev1.Toleration{forever}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeTolerations(tc.first, tc.second); !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
