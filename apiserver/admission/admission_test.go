package admission

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestChainFlagsChooseAmongThePluginsInTheirOrder(t *testing.T) {
	tests := []struct {
		name             string
		enable, disable  string
		want             []string
		wantErrSubstring string
	}{
		{"by default every plugin, in kube-apiserver's order", "", "",
			[]string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority", "DefaultTolerationSeconds",
				"DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
				"RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}, ""},
		{"enabling one that is on changes nothing", "Priority", "",
			[]string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority", "DefaultTolerationSeconds",
				"DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
				"RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}, ""},
		{"disabling takes it out, the order stays", "", "ServiceAccount, Priority",
			[]string{"NamespaceLifecycle", "LimitRanger", "NodeRestriction", "DefaultTolerationSeconds",
				"DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
				"RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}, ""},
		{"an unknown name stops the start", "AlwaysPullImages", "", nil, `admission plugin "AlwaysPullImages" is unknown`},
		{"an unknown name to disable too", "", "Nope", nil, `admission plugin "Nope" is unknown`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewChain(ParseList(tc.enable), ParseList(tc.disable))
			if tc.wantErrSubstring != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstring) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErrSubstring)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Enabled(); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeObjects serves what a test put in it.
type fakeObjects map[schema.GroupVersionResource][]runtime.Object

func (f fakeObjects) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	for _, o := range f[gvr] {
		if o.(metav1.Object).GetName() == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (f fakeObjects) List(_ context.Context, gvr schema.GroupVersionResource, _ string) ([]runtime.Object, error) {
	return f[gvr], nil
}

func newPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
}

func TestThePluginsOnANewPod(t *testing.T) {
	now := metav1.Now()
	objs := fakeObjects{
		namespaces: {
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: &now}},
		},
		priorityClasses: {&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}},
	}
	create := func(pod *corev1.Pod) error {
		a := &Attributes{Operation: Create, Resource: pods, Namespace: pod.Namespace, Object: pod}
		return DefaultChain().Admit(context.Background(), a, objs)
	}

	pod := newPod()
	if err := create(pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "default" || pod.Spec.DeprecatedServiceAccount != "default" {
		t.Errorf("ServiceAccount: got %q/%q, want default", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount)
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 0 {
		t.Errorf("Priority: got %v, want 0 without a class", pod.Spec.Priority)
	}
	if len(pod.Spec.Tolerations) != 2 || *pod.Spec.Tolerations[0].TolerationSeconds != 300 {
		t.Errorf("DefaultTolerationSeconds: got %+v", pod.Spec.Tolerations)
	}

	pod = newPod()
	pod.Spec.PriorityClassName = "high"
	pod.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	if err := create(pod); err != nil || *pod.Spec.Priority != 1000 || len(pod.Spec.Tolerations) != 1 {
		t.Errorf("a class and a toleration of everything: err %v, priority %v, tolerations %d", err, pod.Spec.Priority, len(pod.Spec.Tolerations))
	}

	refusals := []struct {
		name  string
		pod   func() *corev1.Pod
		check func(error) bool
	}{
		{"a namespace that does not exist is 404", func() *corev1.Pod { p := newPod(); p.Namespace = "nope"; return p }, apierrors.IsNotFound},
		{"a namespace being deleted is 403", func() *corev1.Pod { p := newPod(); p.Namespace = "going"; return p }, apierrors.IsForbidden},
		{"an unknown PriorityClass is 403", func() *corev1.Pod { p := newPod(); p.Spec.PriorityClassName = "nope"; return p }, apierrors.IsForbidden},
		{"a priority that disagrees with its class is 403", func() *corev1.Pod {
			p := newPod()
			p.Spec.PriorityClassName, p.Spec.Priority = "high", new(int32)
			return p
		}, apierrors.IsForbidden},
	}
	for _, tc := range refusals {
		if err := create(tc.pod()); !tc.check(err) {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

func TestOnlyOneGlobalDefaultPriorityClass(t *testing.T) {
	objs := fakeObjects{priorityClasses: {&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "first"}, GlobalDefault: true}}}
	second := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "second"}, GlobalDefault: true}
	err := DefaultChain().Admit(context.Background(), &Attributes{Operation: Create, Resource: priorityClasses, Object: second}, objs)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PriorityClass first is already marked as default") {
		t.Fatalf("got %v", err)
	}
}

func TestADisabledPluginDoesNotRun(t *testing.T) {
	c, err := NewChain(nil, []string{"NamespaceLifecycle"})
	if err != nil {
		t.Fatal(err)
	}
	pod := newPod()
	pod.Namespace = "nope"
	if err := c.Admit(context.Background(), &Attributes{Operation: Create, Resource: pods, Namespace: "nope", Object: pod}, fakeObjects{}); err != nil {
		t.Fatalf("without NamespaceLifecycle a missing namespace is not admission's business: %v", err)
	}
}
