package status

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// ReasonContainerCreating is what `kubectl get pods` shows while a
// container waits for its sandbox, image and start.
const ReasonContainerCreating = "ContainerCreating"

// GeneratePodStatus is the kubelet's generateAPIPodStatus: the pod's status
// as the runtime sees it. sb is the pod's sandbox (nil before it exists)
// and waiting holds, by container name, why a container could not start.
//
// Fields the kubelet does not own (qosClass, nominatedNodeName, conditions
// written by others) are kept from the pod's current status, and every
// timestamp is carried over while nothing changes and cut to the seconds
// the API stores, so that an unchanged pod yields an identical status and
// no write.
func GeneratePodStatus(pod *corev1.Pod, sb *kubecontainer.PodSandbox, waiting map[string]*corev1.ContainerStateWaiting, hostIP netip.Addr, now time.Time) corev1.PodStatus {
	t := metav1.NewTime(now).Rfc3339Copy()
	st := *pod.Status.DeepCopy()
	st.HostIP, st.HostIPs = hostIP.String(), []corev1.HostIP{{IP: hostIP.String()}}
	if st.StartTime == nil { // when the kubelet first took the pod
		st.StartTime = &t
	}
	st.PodIP, st.PodIPs = "", nil
	switch {
	case sb != nil && pod.Spec.HostNetwork:
		// The pod is in the node's network namespace: the runtime gives
		// it no IP, and the kubelet reports the node's.
		st.PodIP, st.PodIPs = hostIP.String(), []corev1.PodIP{{IP: hostIP.String()}}
	case sb != nil && sb.IP != "":
		st.PodIP, st.PodIPs = sb.IP, []corev1.PodIP{{IP: sb.IP}}
	}
	// Until the pod is initialized, a container not yet created waits
	// "PodInitializing", as on a real node; without init containers it is
	// "ContainerCreating".
	notCreated := ReasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		notCreated = reasonPodInitializing
	}
	statuses := func(containers []corev1.Container) []corev1.ContainerStatus {
		out := make([]corev1.ContainerStatus, 0, len(containers))
		for _, c := range containers {
			var rc *kubecontainer.Container
			if sb != nil {
				rc = sb.Containers[c.Name]
			}
			out = append(out, containerStatus(c, rc, waiting[c.Name], notCreated))
		}
		return out
	}
	st.InitContainerStatuses = nil
	if len(pod.Spec.InitContainers) > 0 {
		st.InitContainerStatuses = statuses(pod.Spec.InitContainers)
		for i := range st.InitContainerStatuses {
			// An init container is ready once it did its job, for good,
			// not while it runs (the prober manager's UpdatePodStatus); a
			// sidecar is ready by its probes, as an app container.
			cs := &st.InitContainerStatuses[i]
			if !kubetypes.IsSidecar(pod.Spec.InitContainers[i]) {
				cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
			}
		}
	}
	st.ContainerStatuses = statuses(pod.Spec.Containers)
	st.EphemeralContainerStatuses = nil
	if ecs := kubetypes.EphemeralContainers(pod); len(ecs) > 0 {
		st.EphemeralContainerStatuses = statuses(ecs) // not in the phase nor the conditions
	}
	st.Phase = podPhase(pod, st.InitContainerStatuses, st.ContainerStatuses)
	st.Conditions = podConditions(pod, sb != nil && sb.Ready, st.InitContainerStatuses, st.ContainerStatuses, st.Phase, t)
	// The generation of the spec this status is of (Kubernetes 1.35's
	// PodObservedGenerationTracking): a client that changed the spec
	// knows the kubelet has seen its change once observedGeneration
	// reaches the pod's generation. It never goes back.
	st.ObservedGeneration = max(pod.Generation, pod.Status.ObservedGeneration)
	return st
}

// reasonPodInitializing is what a container waits for while the pod's
// init containers run.
const reasonPodInitializing = "PodInitializing"

// initPending lists the init containers that are not done: a regular one
// that has not exited 0, a sidecar that has not started.
func initPending(pod *corev1.Pod, initStatuses []corev1.ContainerStatus) []string {
	var out []string
	for i, cs := range initStatuses {
		switch {
		case kubetypes.IsSidecar(pod.Spec.InitContainers[i]):
			if !hasStarted(cs) {
				out = append(out, cs.Name)
			}
		case cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0:
			out = append(out, cs.Name)
		}
	}
	return out
}

// hasStarted: the container has run at least once.
func hasStarted(cs corev1.ContainerStatus) bool {
	return cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil
}

// containerStatus reports one container from its runtime record rc (nil if
// it was never created: then it waits for the reason notCreated). A
// running container is started and ready unless its probes say not yet
// (rc.NotStarted, rc.NotReady).
func containerStatus(c corev1.Container, rc *kubecontainer.Container, waiting *corev1.ContainerStateWaiting, notCreated string) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false)}
	if rc == nil || rc.State == runtimeapi.ContainerState_CONTAINER_CREATED {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: notCreated}
	}
	if waiting != nil && (rc == nil || rc.State != runtimeapi.ContainerState_CONTAINER_RUNNING) {
		cs.State.Waiting = waiting.DeepCopy()
	}
	if rc == nil {
		return cs
	}
	cs.Image, cs.ImageID, cs.ContainerID, cs.RestartCount = rc.Image, rc.ImageID, rc.ID, int32(rc.Attempt)
	switch rc.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(rc.StartedAt).Rfc3339Copy()}
		cs.Ready, cs.Started = !rc.NotReady, ptr.To(!rc.NotStarted)
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		if cs.State.Waiting == nil {
			cs.State.Terminated = terminated(rc)
		}
	}
	if rc.Previous != nil {
		cs.LastTerminationState.Terminated = terminated(rc.Previous)
	}
	if rc.State == runtimeapi.ContainerState_CONTAINER_EXITED && cs.State.Waiting != nil {
		// Waiting to run again (CrashLoopBackOff): the exit it waits after
		// is its last state.
		cs.LastTerminationState.Terminated = terminated(rc)
	}
	return cs
}

func terminated(rc *kubecontainer.Container) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{ExitCode: rc.ExitCode, Reason: rc.Reason, Message: rc.Message, ContainerID: rc.ID,
		StartedAt: metav1.NewTime(rc.StartedAt).Rfc3339Copy(), FinishedAt: metav1.NewTime(rc.FinishedAt).Rfc3339Copy()}
}

// podPhase is the kubelet's getPhase, seed 003 sections 5.1 and 5.3:
//
//   - Pending while an init container is not done, or a container has
//     not started yet;
//   - Failed when an init container failed and the policy is Never;
//   - Running while a container runs, or all have exited but one will be
//     restarted (restartPolicy Always, or OnFailure after a failure);
//   - Succeeded when all exited with 0 and none will restart;
//   - Failed when all exited, one failed, and none will restart.
//
// Sidecars do not count: a pod whose app containers are done is done. A
// terminating pod (being deleted) restarts nothing whatever its policy,
// so once its containers have stopped it is Succeeded or Failed.
func podPhase(pod *corev1.Pod, initStatuses, statuses []corev1.ContainerStatus) corev1.PodPhase {
	policy, terminating := pod.Spec.RestartPolicy, pod.DeletionTimestamp != nil
	var initFailed bool
	for i, cs := range initStatuses {
		if kubetypes.IsSidecar(pod.Spec.InitContainers[i]) {
			continue
		}
		last := cs.State.Terminated
		if cs.State.Waiting != nil {
			last = cs.LastTerminationState.Terminated
		}
		initFailed = initFailed || (last != nil && last.ExitCode != 0)
	}
	if initFailed && policy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	anyStarted := false
	for _, cs := range statuses {
		anyStarted = anyStarted || hasStarted(cs)
	}
	if len(initPending(pod, initStatuses)) > 0 && !anyStarted {
		return corev1.PodPending
	}
	var waiting, running, stopped, succeeded int
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.LastTerminationState.Terminated != nil:
			stopped++ // waiting to restart
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped == 0:
		return corev1.PodPending
	case terminating && stopped == succeeded:
		return corev1.PodSucceeded
	case terminating:
		return corev1.PodFailed
	case policy == corev1.RestartPolicyAlways:
		return corev1.PodRunning
	case stopped == succeeded:
		return corev1.PodSucceeded
	case policy == corev1.RestartPolicyNever:
		return corev1.PodFailed
	}
	return corev1.PodRunning // OnFailure: the failed container restarts
}

// podConditions are the kubelet's conditions in the order `kubectl describe
// pod` lists them, followed by the other existing ones (PodScheduled, set
// by the scheduler's binding, and any a controller added) as they were.
// A pod created with spec.nodeName never met the scheduler, so the kubelet
// adds PodScheduled=True itself, as a real kubelet does.
func podConditions(pod *corev1.Pod, sandbox bool, initStatuses, statuses []corev1.ContainerStatus, phase corev1.PodPhase, now metav1.Time) []corev1.PodCondition {
	old := pod.Status.Conditions
	var unready []string
	for i, cs := range initStatuses {
		if kubetypes.IsSidecar(pod.Spec.InitContainers[i]) && !cs.Ready {
			unready = append(unready, cs.Name) // a sidecar must be ready too
		}
	}
	for _, cs := range statuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	initialized := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	if pending := initPending(pod, initStatuses); len(pending) > 0 && !wasInitialized(old) {
		initialized = corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: "ContainersNotInitialized",
			Message: fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(pending, " "))}
	}
	ready := corev1.PodCondition{Status: corev1.ConditionTrue}
	switch {
	case phase == corev1.PodSucceeded || phase == corev1.PodFailed:
		ready = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: "PodCompleted"}
	case len(unready) > 0:
		ready = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: "ContainersNotReady",
			Message: fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))}
	}
	containersReady := ready
	if ready.Status == corev1.ConditionTrue {
		ready = readinessGates(pod.Spec.ReadinessGates, old)
	}
	ready.Type, containersReady.Type = corev1.PodReady, corev1.ContainersReady
	want := []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: conditionStatus(sandbox)},
		initialized,
		ready,
		containersReady,
	}
	scheduled := false
	for _, o := range old {
		scheduled = scheduled || o.Type == corev1.PodScheduled
	}
	if !scheduled {
		want = append(want, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	}
	owned := map[corev1.PodConditionType]bool{}
	for i := range want {
		c := &want[i]
		owned[c.Type] = true
		c.ObservedGeneration = pod.Generation // the spec it was computed from
		c.LastTransitionTime = now
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	for _, o := range old {
		if owned[o.Type] {
			continue
		}
		if o.Type == corev1.PodScheduled && o.Status == corev1.ConditionTrue {
			// The kubelet reports PodScheduled=True too, once the pod is
			// on its node: of the generation it runs.
			o.ObservedGeneration = pod.Generation
		}
		want = append(want, o)
	}
	return want
}

// wasInitialized: the pod was initialized once, which it stays even if
// an init container's record is gone.
func wasInitialized(old []corev1.PodCondition) bool {
	for _, c := range old {
		if c.Type == corev1.PodInitialized && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func conditionStatus(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// readinessGates is the Ready condition of a pod whose containers are
// ready: True only if every readiness gate's condition, which some
// controller writes into the pod's status, is True too (Kubernetes'
// GeneratePodReadyCondition, and its messages).
func readinessGates(gates []corev1.PodReadinessGate, conditions []corev1.PodCondition) corev1.PodCondition {
	var unready []string
	for _, g := range gates {
		var found *corev1.PodCondition
		for i := range conditions {
			if conditions[i].Type == g.ConditionType {
				found = &conditions[i]
			}
		}
		switch {
		case found == nil:
			unready = append(unready, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case found.Status != corev1.ConditionTrue:
			unready = append(unready, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, found.Status))
		}
	}
	if len(unready) > 0 {
		return corev1.PodCondition{Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady", Message: strings.Join(unready, ", ")}
	}
	return corev1.PodCondition{Status: corev1.ConditionTrue}
}
