package kubelet

import (
	"context"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// The pod pipeline, seed step 12: the informer watches the pods bound to
// this node → the fleet's route puts the key on its node's queue → workers
// (queue.Work) → syncPod, which makes the node match the pod and
// reports the result (step 13).

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
	case kubetypes.PodFinished(pod):
		return actionRelease
	}
	return actionRun
}

// syncPod makes this node match the pod named key, as the informer's cache
// has it now.
func (k *Kubelet) syncPod(ctx context.Context, key string) error {
	obj, ok := k.informer.Cache().Get(key)
	if sp := k.static.Named(key); sp != nil || (ok && kubetypes.IsMirrorPod(obj.(*corev1.Pod))) {
		var mirror *corev1.Pod
		if ok {
			mirror = obj.(*corev1.Pod).DeepCopy()
		}
		return k.staticPods.Sync(ctx, key, sp, mirror) // package config
	}
	if !ok {
		// The pod was deleted from the API server: forget it. A runtime
		// call that failed is retried.
		return k.forgetPod(ctx, key, "")
	}
	pod := obj.(*corev1.Pod).DeepCopy() // never modify the cache's copy
	pod.SetGroupVersionKind(kubetypes.PodGVK)
	// A pod deleted and recreated under the same name is a new pod: drop
	// whatever the old one left behind.
	if err := k.forgetPod(ctx, key, pod.UID); err != nil {
		return err // retried
	}
	switch podActionFor(pod) {
	case actionTerminate:
		k.probes.Remove(pod.UID) // a terminating pod is not probed
		return k.terminate(ctx, pod)
	case actionRelease:
		k.probes.Remove(pod.UID)
		k.admission.Forget(key, "") // a finished pod holds nothing on the node (package lifecycle)
		if k.terminating.busy(pod.UID) {
			return nil // its containers are being stopped; it comes back after
		}
		if f, failed := k.status.Failure(pod.UID); failed {
			// A sync that was under way when the kubelet failed the pod
			// (an eviction) may have reported it Failed before its
			// containers were stopped: stop them now with their grace
			// period and report them, or the API would show a Failed pod
			// with a running container forever.
			sb, err := k.runtime.podSandbox(ctx, pod.UID)
			if err != nil {
				return err // retried
			}
			if sb != nil && anyRunning(sb) {
				return k.failPod(ctx, pod, sb, f) // deadline.go; its requeue releases the pod
			}
		}
		return k.releasePod(ctx, pod, "pod finished") // an error is retried
	}
	return k.runPod(ctx, pod)
}

// forgetPod removes the sandboxes of pods named key other than keep (""
// removes them all), freeing their IPs, and their log directories, as
// the kubelet's garbage collector does for pods gone from the API server.
func (k *Kubelet) forgetPod(ctx context.Context, key string, keep types.UID) error {
	k.admission.Forget(key, keep)
	ns, name, _ := strings.Cut(key, "/")
	list, err := k.runtime.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{kuberuntime.LabelPodNamespace: ns, kuberuntime.LabelPodName: name, kuberuntime.LabelNodeName: k.cfg.NodeName}}})
	if err != nil {
		return fmt.Errorf("list pod sandboxes: %w", err)
	}
	for _, sb := range list.GetItems() {
		uid := types.UID(sb.GetMetadata().GetUid())
		if uid == keep {
			continue
		}
		if err := k.removeSandbox(ctx, sb.GetId()); err != nil {
			return err
		}
		dir := kuberuntime.PodLogDirectory(k.cfg.PodLogsDir, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}})
		if err := os.RemoveAll(dir); err != nil {
			k.log.Warn("could not remove pod logs", "pod", key, "dir", dir, "err", err)
		}
		k.probes.Remove(uid)
		k.volumes.TearDownVolumes(uid)
		k.fleet.podCertificates.Forget(uid) // package podcertificate: its keys, in memory only
		k.backOff.ForgetPod(string(uid))
		k.images.Forget(uid)
		k.metrics.Kubelet.Forget(uid)
		k.status.Forget(uid)
		k.static.Forget(uid)
		k.log.Info("forgot pod: it is gone from the API server", "pod", key, "uid", uid, "sandbox", sb.GetId())
	}
	return nil
}

// releasePod frees the sandboxes (and IP) of a pod that will not run
// again: StopPodSandbox, as the kubelet's pod cleanup does. Its dead
// containers stay, with their logs, for `kubectl logs` of a finished pod,
// until the pod is deleted (forgetPod).
func (k *Kubelet) releasePod(ctx context.Context, pod *corev1.Pod, why string) error {
	list, err := k.runtime.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{kuberuntime.LabelPodUID: string(pod.UID)}}})
	if err != nil {
		return fmt.Errorf("list pod sandboxes: %w", err)
	}
	for _, sb := range list.GetItems() {
		if sb.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if _, err := k.runtime.runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil && status.Code(err) != codes.NotFound {
			return fmt.Errorf("stop pod sandbox: %w", err)
		}
		k.log.Info("stopped pod sandbox: "+why, "pod", client.KeyOf(pod), "sandbox", sb.GetId())
	}
	return nil
}

// removeSandbox stops the sandbox, which frees its IP, then removes it
// with its containers.
func (k *Kubelet) removeSandbox(ctx context.Context, id string) error {
	if _, err := k.runtime.runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("stop pod sandbox: %w", err)
	}
	if _, err := k.runtime.runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
		return fmt.Errorf("remove pod sandbox: %w", err)
	}
	return nil
}
