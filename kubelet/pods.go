package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// The pod pipeline, seed step 12: the informer watches the pods bound to
// this node → enqueue puts the key on the queue → workers
// (queue.Work) → syncPod, which makes the node match the pod and
// reports the result (step 13).

// podGVK is set on every pod the kubelet works with: events name the
// object by apiVersion and kind.
var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// podAction is what syncPod does for a pod, decided from the pod alone.
type podAction string

const (
	// actionRun: make the containers match the spec (start what is not
	// running) and report the status.
	actionRun podAction = "run"
	// actionTerminate: deletion was requested (deletionTimestamp is set);
	// stop the containers, report them stopped, delete the pod for good.
	actionTerminate podAction = "terminate"
	// actionRelease: the pod finished (Succeeded or Failed); nothing will
	// run again, so free its sandbox and IP and leave its status alone.
	actionRelease podAction = "release"
)

// podActionFor picks the action for pod.
func podActionFor(pod *corev1.Pod) podAction {
	switch {
	case pod.DeletionTimestamp != nil:
		return actionTerminate
	case podFinished(pod):
		return actionRelease
	}
	return actionRun
}

// enqueue is the handler of every pod event: it only queues the pod's key.
func (k *Kubelet) enqueue(obj runtime.Object) {
	k.queue.Add(client.KeyOf(obj))
}

// syncPod makes this node match the pod named key, as the informer's cache
// has it now.
func (k *Kubelet) syncPod(ctx context.Context, key string) error {
	obj, ok := k.informer.Cache().Get(key)
	if !ok {
		// The pod was deleted from the API server: forget it. Nothing can
		// fail, so nothing is retried.
		k.forgetPod(key, "")
		return nil
	}
	pod := obj.(*corev1.Pod).DeepCopy() // never modify the cache's copy
	pod.SetGroupVersionKind(podGVK)
	// A pod deleted and recreated under the same name is a new pod: drop
	// whatever the old one left behind.
	k.forgetPod(key, pod.UID)
	switch podActionFor(pod) {
	case actionTerminate:
		return k.terminatePod(ctx, pod)
	case actionRelease:
		k.releasePod(pod, "pod finished")
		return nil
	}
	return k.runPod(ctx, pod)
}

// forgetPod removes the sandboxes of pods named key other than keep (""
// removes them all), freeing their IPs.
func (k *Kubelet) forgetPod(key string, keep types.UID) {
	for _, sb := range k.containerRuntime.ListPodSandboxes() {
		if sb.Pod.Namespace+"/"+sb.Pod.Name != key || sb.Pod.UID == keep {
			continue
		}
		k.containerRuntime.RemovePodSandbox(sb.Pod.UID)
		k.log.Info("forgot pod: it is gone from the API server", "pod", key, "uid", sb.Pod.UID, "releasedIP", sb.IP.String())
	}
}

// releasePod frees the sandbox (and IP) of a pod that will not run again.
func (k *Kubelet) releasePod(pod *corev1.Pod, why string) {
	sb, ok := k.containerRuntime.PodSandboxStatus(pod.UID)
	if ok && k.containerRuntime.RemovePodSandbox(pod.UID) {
		k.log.Info("removed pod sandbox: "+why, "pod", client.KeyOf(pod), "releasedIP", sb.IP.String())
	}
}
