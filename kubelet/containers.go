package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/kubelet/backoff"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	"github.com/mkube/mkube/kubelet/lifecycle"
	"github.com/mkube/mkube/kubelet/status"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// runPod is seed step 12 proper: "the kubelet calls the container runtime
// to start the containers, and sends the pod's and the containers' status
// back to the API server". A pod new to the node goes through:
//
//  1. report ContainerCreating, so users see the kubelet took the pod;
//  2. create the pod sandbox, which gives the pod its IP;
//  3. per container: pull the image if the policy says so, create, start;
//  4. report the result: Running and Ready (step 13).
//
// On later syncs only what differs from the spec is redone: a container
// whose image was changed is stopped and started again with the new one
// (seed 000: "if the image was upgraded, the kubelet fetches the latest
// image and loads it").
func (k *Kubelet) runPod(ctx context.Context, pod *corev1.Pod) error {
	key := client.KeyOf(pod)
	sb, err := k.runtime.podSandbox(ctx, pod.UID)
	if err != nil {
		return err // retried
	}
	if sb == nil {
		if _, failed := k.status.Failure(pod.UID); !failed {
			if r, err := k.admission.Admit(ctx, pod); err != nil || r != nil { // package lifecycle
				if r != nil {
					return k.rejectPod(ctx, pod, r)
				}
				return err // retried
			}
		}
		k.log.Info("pod bound to this node: starting it", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "containers", len(pod.Spec.Containers))
		stored, err := k.reportStatus(ctx, pod, nil, nil)
		if err != nil || stored == nil {
			return err // retried, or absorbed: the pod is gone
		}
		pod = stored
		resp, err := k.runtimeManager.RunPodSandbox(ctx, pod) // package kuberuntime
		if err != nil {
			return fmt.Errorf("run pod sandbox: %w", err) // retried: another pod may free an IP, the handler's class may come back
		}
		if sb, err = k.runtime.podSandbox(ctx, pod.UID); err != nil {
			return err // retried
		}
		k.log.Info("created pod sandbox", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "podIP", sb.IP, "sandbox", resp.GetPodSandboxId())
	}
	// Its resources as the node took them; an earlier kubelet's pod, too
	// (package lifecycle). A resize deferred is tried again later.
	if deferred := k.admission.Allocate(ctx, pod); deferred {
		k.queue.AddAfter(key, k.cfg.SyncFrequency) // other pods may have gone by then
	}
	if f, failed := k.status.Failure(pod.UID); failed {
		return k.failPod(ctx, pod, sb, f)
	}
	if ready, err := k.volumes.MountVolumes(ctx, pod, sb); !ready {
		return err // retried; the containers wait, ContainerCreating
	}
	if past, left := k.pastActiveDeadline(pod); past {
		return k.failPod(ctx, pod, sb, status.Failure{Reason: reasonDeadlineExceeded, Message: messageDeadlineExceeded})
	} else if left > 0 {
		k.queue.AddAfter(key, left) // to notice the deadline when it comes
	}
	// A container that exited and restarts now is first reported as it
	// ended (Completed, Error, OOMKilled), as the kubelet reports what it
	// found before acting on it: that is the STATUS a user sees between
	// two runs.
	for _, c := range kubetypes.AllContainers(pod) {
		if k.restartsNow(pod, sb.Containers[c.Name]) {
			stored, err := k.reportStatus(ctx, pod, sb, nil)
			if err != nil || stored == nil {
				return err // retried, or absorbed: the pod is gone
			}
			pod = stored
			break
		}
	}
	waiting := map[string]*corev1.ContainerStateWaiting{}
	initialized, err := k.syncInitContainers(ctx, pod, sb, waiting)
	if err != nil {
		return err // retried
	}
	if initialized && len(pod.Spec.InitContainers) > 0 && !podcondition.IsInitialized(pod) {
		// The init containers are done: report it before the app
		// containers start (PodInitializing while their images come).
		stored, err := k.reportStatus(ctx, pod, sb, waiting)
		if err != nil || stored == nil {
			return err // retried, or absorbed: the pod is gone
		}
		pod = stored
	}
	for _, c := range pod.Spec.Containers {
		if !initialized {
			break
		}
		w, err := k.syncContainer(ctx, pod, sb, c)
		if err != nil {
			return err // retried
		}
		if w != nil {
			waiting[c.Name] = w
		}
	}
	if initialized {
		if err := k.syncEphemeralContainers(ctx, pod, sb, waiting); err != nil { // ephemeral.go
			return err // retried
		}
	}
	if sb, err = k.runtime.podSandbox(ctx, pod.UID); err != nil {
		return err // retried
	}
	stored, err := k.reportStatus(ctx, pod, sb, waiting)
	if stored != nil {
		k.probes.SyncSandbox(ctx, stored, sb) // package prober
	}
	return err
}

// syncInitContainers runs the pod's init containers in order, each to
// completion before the next starts (Kubernetes' init containers): it
// starts the first one not done yet, restarts it after a failure unless
// the pod's policy is Never, and reports whether all are done, so that
// the app containers may start. A sidecar (an init container with
// restartPolicy Always) is started in its turn and kept running, and
// the next one starts once it has started.
func (k *Kubelet) syncInitContainers(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, waiting map[string]*corev1.ContainerStateWaiting) (bool, error) {
	for _, c := range pod.Spec.InitContainers {
		cur := sb.Containers[c.Name]
		switch {
		case kubetypes.IsSidecar(c):
			w, err := k.syncContainer(ctx, pod, sb, c)
			if err != nil {
				return false, err
			}
			if w != nil {
				waiting[c.Name] = w
			}
			if cur == nil || cur.State == runtimeapi.ContainerState_CONTAINER_CREATED {
				return false, nil // the next one waits until it has started
			}
		case cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && cur.ExitCode == 0:
			// Done: an init container that succeeded never runs again.
		case cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
			return false, nil
		default:
			w, err := k.syncContainer(ctx, pod, sb, c)
			if w != nil {
				waiting[c.Name] = w
			}
			if err == nil && cur == nil {
				k.log.Info("running init container", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name)
			}
			return false, err
		}
	}
	return true, nil
}

// restartPolicyOf is the policy a container restarts by: the pod's for
// an app container; for an init container, OnFailure (a completed one
// never runs again) unless the pod's is Never; Always for a sidecar.
func restartPolicyOf(pod *corev1.Pod, name string) corev1.RestartPolicy {
	if isEphemeral(pod, name) {
		return corev1.RestartPolicyNever // an ephemeral container runs once
	}
	for _, c := range pod.Spec.InitContainers {
		switch {
		case c.Name != name:
		case kubetypes.IsSidecar(c):
			return corev1.RestartPolicyAlways
		case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
			return corev1.RestartPolicyNever
		default:
			return corev1.RestartPolicyOnFailure
		}
	}
	return pod.Spec.RestartPolicy
}

// syncContainer makes container c run with the image its spec names, in
// the pod's sandbox sb, as its restart policy allows. It returns a
// waiting state if c cannot start for now.
func (k *Kubelet) syncContainer(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, c corev1.Container) (*corev1.ContainerStateWaiting, error) {
	key := client.KeyOf(pod)
	cur := sb.Containers[c.Name]
	alloc, _ := k.admission.Allocation(pod)
	c = lifecycle.AllocatedContainer(alloc, c) // its resources as allocated (package lifecycle)
	switch {
	case cur == nil:
	case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
		if cur.Image == c.Image {
			restart, err := k.resizeContainer(ctx, pod, c, cur) // the common case: nothing to do
			if !restart || err != nil {
				return nil, err
			}
			k.recorder.Event(pod, corev1.EventTypeNormal, "Killing", "Container %s resize requires a restart", c.Name)
			k.log.Info("resized: restarting container, as its resizePolicy says", "pod", key, "container", c.Name)
		} else {
			k.recorder.Event(pod, corev1.EventTypeNormal, "Killing", "Container %s definition changed, will be restarted", c.Name)
			k.log.Info("image changed: restarting container", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "container", c.Name, "from", cur.Image, "to", c.Image)
		}
		if err := k.runtimeManager.KillContainer(ctx, pod, c, cur, kuberuntime.GracePeriod(pod.Spec.TerminationGracePeriodSeconds)); err != nil {
			return nil, err
		}
	case cur.State == runtimeapi.ContainerState_CONTAINER_EXITED:
		if !k.restarts(pod, cur) {
			return nil, nil // it stays terminated
		}
		bkey := backoff.Key(string(pod.UID), c.Name)
		if remaining, delay := k.backOff.Wait(bkey, cur.FinishedAt); remaining > 0 {
			if kubetypes.ReportedWaiting(pod, c.Name) != reasonCrashLoopBackOff {
				// Once per back-off, not at every sync while it lasts.
				k.recorder.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", c.Name, kuberuntime.PodRef(pod))
			}
			k.log.Info("container keeps exiting: waiting before its restart (CrashLoopBackOff)", "pod", key, "container", c.Name,
				"exitCode", cur.ExitCode, "backOff", delay, "restartIn", remaining.Round(time.Millisecond))
			k.queue.AddAfter(key, remaining)
			return &corev1.ContainerStateWaiting{Reason: reasonCrashLoopBackOff,
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, c.Name, kuberuntime.PodRef(pod))}, nil
		}
		k.backOff.Next(bkey, cur.FinishedAt)
		k.log.Info("container exited: restarting it as its restart policy says", "pod", key, "container", c.Name,
			"exitCode", cur.ExitCode, "reason", cur.Reason, "restartPolicy", restartPolicyOf(pod, c.Name), "restartCount", cur.Attempt+1)
	}
	id := ""
	if cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_CREATED {
		id = cur.RawID // created by an earlier sync that failed to start it
	} else {
		imageRef, w, err := k.ensureImage(ctx, pod, c)
		if w != nil || err != nil {
			return w, err
		}
		if w, err := k.volumes.EnsureVolumeImages(ctx, pod, c); w != nil || err != nil { // package volumemanager
			return w, err
		}
		// A restart is a new container, the next attempt: CRI never starts
		// an exited container again.
		var attempt uint32
		if cur != nil {
			attempt = cur.Attempt + 1
		}
		// The image first, then the config, as kuberuntime's startContainer:
		// a missing ConfigMap shows after Pulled, as CreateContainerConfigError.
		env, err := k.env.ContainerEnv(ctx, pod, sb, c)
		if err == nil {
			err = k.volumes.PrepareSubPaths(pod, c, env) // package volumemanager
		}
		if err != nil {
			return k.env.ConfigError(pod, c, err), nil // retried after package envvars' configErrorRetry
		}
		if id, err = k.runtimeManager.CreateContainer(ctx, pod, sb, c, cur, attempt, imageRef, env); err != nil { // package kuberuntime
			return nil, err // retried
		}
	}
	return nil, k.runtimeManager.StartContainer(ctx, pod, c, id, sb.IP) // and its postStart hook
}

// reasonCrashLoopBackOff is a container's waiting reason while its
// restart is delayed (package backoff).
const reasonCrashLoopBackOff = "CrashLoopBackOff"

// shouldRestart is the restart policy (seed 003 §5.2): Always restarts
// a container whatever its exit code, OnFailure only after a non-zero one
// (an OOM kill is 137), Never never.
func shouldRestart(policy corev1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// restarts: the exited container rc is to run again, by its restart
// policy, or because a probe killed it (then unless the policy is Never,
// whatever its exit code, as the kubelet's computePodActions).
func (k *Kubelet) restarts(pod *corev1.Pod, rc *kubecontainer.Container) bool {
	policy := restartPolicyOf(pod, rc.Name)
	return shouldRestart(policy, rc.ExitCode) ||
		(policy != corev1.RestartPolicyNever && k.probes.KilledByProbe(pod.UID, rc.Name, rc.RawID))
}

// restartsNow: rc exited and is restarted on this sync, not delayed.
func (k *Kubelet) restartsNow(pod *corev1.Pod, rc *kubecontainer.Container) bool {
	if rc == nil || rc.State != runtimeapi.ContainerState_CONTAINER_EXITED || !k.restarts(pod, rc) {
		return false
	}
	remaining, _ := k.backOff.Wait(backoff.Key(string(pod.UID), rc.Name), rc.FinishedAt)
	return remaining == 0
}
