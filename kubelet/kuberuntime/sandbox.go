package kuberuntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
)

// RunPodSandbox is the kubelet's createPodSandbox: the handler of the
// pod's RuntimeClass, then RunPodSandbox with it. A failure is reported
// as the kubelet reports it, an event FailedCreatePodSandBox "Failed to
// create pod sandbox: <the runtime's error>" (kubectl describe pod shows
// it, e.g. for a handler the runtime has not got), and the pod stays
// Pending while the kubelet retries.
func (m *Manager) RunPodSandbox(ctx context.Context, pod *corev1.Pod) (*runtimeapi.RunPodSandboxResponse, error) {
	handler, err := m.runtimeHandler(ctx, pod)
	cfg := m.Configs.SandboxConfig(pod, 0)
	if err == nil {
		cfg.DnsConfig, err = m.PodDNS(pod) // the kubelet's dns.go
	}
	var resp *runtimeapi.RunPodSandboxResponse
	if err == nil {
		resp, err = m.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: handler})
	}
	if err != nil {
		m.Recorder.Event(pod, corev1.EventTypeWarning, reasonFailedCreatePodSandBox, "Failed to create pod sandbox: %v", err)
		return nil, err
	}
	return resp, nil
}

// reasonFailedCreatePodSandBox is the kubelet's event reason (its
// spelling, capital B).
const reasonFailedCreatePodSandBox = "FailedCreatePodSandBox"

// RuntimeClasses is node.k8s.io/v1 RuntimeClasses, which only the kubelet
// reads among mkube's components.
var RuntimeClasses = client.Resource{GroupVersion: nodev1.SchemeGroupVersion, Name: "runtimeclasses", Kind: "RuntimeClass",
	New: func() runtime.Object { return &nodev1.RuntimeClass{} }, NewList: func() runtime.Object { return &nodev1.RuntimeClassList{} }}

// runtimeHandler is the CRI handler of the pod's RuntimeClass, which the
// kubelet passes to RunPodSandbox (Kubernetes' LookupRuntimeHandler): ""
// for a pod that names no class, the runtime's default. The kubelet reads
// the class when it creates the sandbox (Kubernetes' keeps an informer);
// a class deleted since the pod was admitted fails the sandbox, worded as
// Kubernetes' lister words it.
func (m *Manager) runtimeHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName == "" {
		return "", nil
	}
	name := *pod.Spec.RuntimeClassName
	rc := &nodev1.RuntimeClass{}
	if err := m.Client.Get(ctx, RuntimeClasses, "", name, rc); apierrors.IsNotFound(err) {
		return "", apierrors.NewNotFound(schema.GroupResource{Group: nodev1.GroupName, Resource: "runtimeclass"}, name)
	} else if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %w", name, err)
	}
	return rc.Handler, nil
}
