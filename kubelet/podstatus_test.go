package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/cri"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/images"
	"github.com/mkube/mkube/kubelet/status"
)

var hostIP = netip.MustParseAddr("10.240.1.1")

// newTestPod is a pod as the API server holds it after the scheduler's
// binding: Pending, PodScheduled=True, qosClass set.
func newTestPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{NodeName: "node01", RestartPolicy: corev1.RestartPolicyAlways, Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1.25"}, {Name: "sidecar", Image: "redis:7"},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Minute))},
		}},
	}
}

// startAll runs the pod's containers in a fresh in-process runtime,
// through the CRI calls the kubelet makes, and returns the runtime and
// what it reports for the pod.
func startAll(t *testing.T, pod *corev1.Pod) (*runtimeService, *kubecontainer.PodSandbox) {
	t.Helper()
	rs := testRuntime(t)
	ctx, logs := context.Background(), t.TempDir()
	sb, err := rs.runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: criConfigs(logs).SandboxConfig(pod, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pod.Spec.Containers {
		startContainer(t, rs, pod, sb.GetPodSandboxId(), c, 0)
	}
	return rs, podSandboxOf(t, rs, pod)
}

// startContainer pulls c's image, creates its attempt-th instance in the
// sandbox and starts it.
func startContainer(t *testing.T, rs *runtimeService, pod *corev1.Pod, sandboxID string, c corev1.Container, attempt uint32) {
	t.Helper()
	ctx := context.Background()
	pulled, err := rs.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: c.Image}})
	if err != nil {
		t.Fatal(err)
	}
	created, err := rs.runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID,
		Config: criConfigs("").ContainerConfig(pod, c, attempt, pulled.GetImageRef(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: created.GetContainerId()}); err != nil {
		t.Fatal(err)
	}
}

func podSandboxOf(t *testing.T, rs *runtimeService, pod *corev1.Pod) *kubecontainer.PodSandbox {
	t.Helper()
	sb, err := rs.podSandbox(context.Background(), pod.UID)
	if err != nil || sb == nil {
		t.Fatalf("pod sandbox of %s: %v, %v", pod.Name, sb, err)
	}
	return sb
}

// imageID is the ID mkube's runtime gives an image pulled from Docker Hub
// by a one-component name: the SHA-256 of its full name.
func imageID(name string) string {
	sum := sha256.Sum256([]byte("docker.io/library/" + name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestGeneratePodStatusBeforeTheSandboxExists(t *testing.T) {
	pod := newTestPod()
	st := status.GeneratePodStatus(pod, nil, nil, hostIP, t0)

	if st.Phase != corev1.PodPending || st.PodIP != "" || st.HostIP != "10.240.1.1" || st.StartTime == nil || !st.StartTime.Time.Equal(t0) {
		t.Errorf("phase %s podIP %q hostIP %q startTime %v", st.Phase, st.PodIP, st.HostIP, st.StartTime)
	}
	if st.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("qosClass = %q: the API server's value was lost", st.QOSClass)
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.Ready {
			t.Errorf("container %s: state %+v ready %v, want waiting ContainerCreating", cs.Name, cs.State, cs.Ready)
		}
	}
	wantConditions(t, st, map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodReadyToStartContainers: corev1.ConditionFalse, corev1.PodInitialized: corev1.ConditionTrue,
		corev1.PodReady: corev1.ConditionFalse, corev1.ContainersReady: corev1.ConditionFalse, corev1.PodScheduled: corev1.ConditionTrue,
	})
	ready := findPodCondition(st.Conditions, corev1.PodReady)
	if ready.Reason != "ContainersNotReady" || ready.Message != "containers with unready status: [web sidecar]" {
		t.Errorf("Ready reason %q message %q", ready.Reason, ready.Message)
	}
	if sched := findPodCondition(st.Conditions, corev1.PodScheduled); !sched.LastTransitionTime.Time.Equal(t0.Add(-time.Minute)) {
		t.Error("the scheduler's PodScheduled condition was rewritten")
	}
}

func TestGeneratePodStatusOnceTheContainersRun(t *testing.T) {
	pod := newTestPod()
	_, sb := startAll(t, pod)
	st := status.GeneratePodStatus(pod, sb, nil, hostIP, t0)

	if st.Phase != corev1.PodRunning || st.PodIP != "10.244.1.2" || len(st.PodIPs) != 1 {
		t.Errorf("phase %s podIP %q podIPs %v", st.Phase, st.PodIP, st.PodIPs)
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started || cs.RestartCount != 0 {
			t.Errorf("container %s: %+v, want running, ready and started", cs.Name, cs)
		}
		if len(cs.ContainerID) < len("mkube://") || cs.ContainerID[:8] != "mkube://" || cs.ImageID != imageID(cs.Image) {
			t.Errorf("container %s: containerID %q imageID %q", cs.Name, cs.ContainerID, cs.ImageID)
		}
	}
	wantConditions(t, st, map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodReadyToStartContainers: corev1.ConditionTrue, corev1.PodReady: corev1.ConditionTrue, corev1.ContainersReady: corev1.ConditionTrue,
	})
}

func TestGeneratePodStatusOfAPodBeingDeleted(t *testing.T) {
	pod := newTestPod()
	rs, sb := startAll(t, pod)
	for _, c := range sb.Containers {
		if _, err := rs.runtime.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: c.RawID, Timeout: 30}); err != nil {
			t.Fatal(err)
		}
	}
	sb = podSandboxOf(t, rs, pod)
	pod.DeletionTimestamp = &metav1.Time{Time: t0.Add(30 * time.Second)}
	st := status.GeneratePodStatus(pod, sb, nil, hostIP, t0)

	if st.Phase != corev1.PodSucceeded {
		t.Errorf("phase = %s, want Succeeded: all containers exited 0 and a deleted pod restarts nothing", st.Phase)
	}
	for _, cs := range st.ContainerStatuses {
		if term := cs.State.Terminated; term == nil || term.Reason != "Completed" || term.ExitCode != 0 || cs.Ready {
			t.Errorf("container %s: %+v, want terminated Completed 0", cs.Name, cs.State)
		}
	}
	if ready := findPodCondition(st.Conditions, corev1.PodReady); ready.Status != corev1.ConditionFalse || ready.Reason != "PodCompleted" {
		t.Errorf("Ready = %+v, want False PodCompleted", ready)
	}
}

func TestGeneratePodStatusOfAContainerWhoseImageMayNotBePulled(t *testing.T) {
	pod := newTestPod()
	w := map[string]*corev1.ContainerStateWaiting{"web": {Reason: images.ErrImageNeverPull, Message: "not present"}}
	st := status.GeneratePodStatus(pod, nil, w, hostIP, t0)
	if got := st.ContainerStatuses[0].State.Waiting; got == nil || got.Reason != images.ErrImageNeverPull {
		t.Errorf("web waiting = %+v, want %s", got, images.ErrImageNeverPull)
	}
	if got := st.ContainerStatuses[1].State.Waiting; got == nil || got.Reason != status.ReasonContainerCreating {
		t.Errorf("sidecar waiting = %+v, want ContainerCreating", got)
	}
}

func TestAPodCreatedWithNodeNameGetsPodScheduled(t *testing.T) {
	pod := newTestPod()
	pod.Status.Conditions = nil // it never met the scheduler
	st := status.GeneratePodStatus(pod, nil, nil, hostIP, t0)
	if c := findPodCondition(st.Conditions, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("PodScheduled = %+v, want True", c)
	}
}

// An unchanged pod must produce an equal status after the round trip
// through the API server, or every informer event would cause a write and
// the write another event.
func TestAStatusThatWasStoredIsNotWrittenAgain(t *testing.T) {
	pod := newTestPod()
	_, sb := startAll(t, pod)
	for _, tc := range []struct {
		name string
		sb   *kubecontainer.PodSandbox
	}{{"while creating", nil}, {"while running", sb}} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Status = status.GeneratePodStatus(p, tc.sb, nil, hostIP, t0.Add(123*time.Millisecond))
			stored := roundTrip(t, p)
			again := status.GeneratePodStatus(stored, tc.sb, nil, hostIP, t0.Add(time.Hour))
			if !equality.Semantic.DeepEqual(stored.Status, again) {
				a, _ := json.Marshal(stored.Status)
				b, _ := json.Marshal(again)
				t.Errorf("status changed without a change on the node:\nstored %s\nagain  %s", a, b)
			}
		})
	}
}

// A restarted kubelet rebuilds the in-process runtime from the pod's
// status; the pod's next status must be the one it has.
func TestARestoredPodReportsTheStatusItHad(t *testing.T) {
	pod := newTestPod()
	rs, sb := startAll(t, pod)
	ctx := context.Background()
	if _, err := rs.runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: sb.Containers["web"].RawID, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	startContainer(t, rs, pod, sb.ID, pod.Spec.Containers[0], 1) // restarted once
	pod.Status = status.GeneratePodStatus(pod, podSandboxOf(t, rs, pod), nil, hostIP, t0)
	stored := roundTrip(t, pod)

	var containers []cri.RestoredContainer
	for _, cs := range stored.Status.ContainerStatuses {
		rc := restoredContainers(stored, cs, nil)
		if len(rc) == 0 {
			t.Fatalf("container %s was not restored", cs.Name)
		}
		containers = append(containers, rc...)
	}
	fresh := testRuntime(t)
	for _, c := range pod.Spec.Containers {
		if err := fresh.inProcess.RestoreImage(c.Image); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fresh.inProcess.RestoreSandbox(criConfigs(t.TempDir()).SandboxConfig(stored, 0), netip.MustParseAddr(stored.Status.PodIP), t0, containers); err != nil {
		t.Fatal(err)
	}
	again := status.GeneratePodStatus(stored, podSandboxOf(t, fresh, stored), nil, hostIP, t0.Add(time.Hour))
	if !equality.Semantic.DeepEqual(stored.Status, again) {
		a, _ := json.Marshal(stored.Status)
		b, _ := json.Marshal(again)
		t.Errorf("restored pod reports a new status:\nstored %s\nagain  %s", a, b)
	}
	if again.ContainerStatuses[0].RestartCount != 1 || again.ContainerStatuses[0].LastTerminationState.Terminated == nil {
		t.Errorf("restart count or last state lost: %+v", again.ContainerStatuses[0])
	}
}

func TestPodActionFor(t *testing.T) {
	deleting := newTestPod()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	succeeded := newTestPod()
	succeeded.Status.Phase = corev1.PodSucceeded
	failedAndDeleting := deleting.DeepCopy()
	failedAndDeleting.Status.Phase = corev1.PodFailed
	tests := []struct {
		name string
		pod  *corev1.Pod
		want podAction
	}{
		{"a pending pod is run", newTestPod(), actionRun},
		{"a pod with a deletionTimestamp is terminated", deleting, actionTerminate},
		{"a finished pod only has its sandbox released", succeeded, actionRelease},
		{"a finished pod being deleted is still deleted for good", failedAndDeleting, actionTerminate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podActionFor(tt.pod); got != tt.want {
				t.Errorf("podActionFor = %s, want %s", got, tt.want)
			}
		})
	}
}

// roundTrip is what storing a pod does to it: JSON, second precision.
func roundTrip(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	data, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantConditions(t *testing.T, st corev1.PodStatus, want map[corev1.PodConditionType]corev1.ConditionStatus) {
	t.Helper()
	for typ, status := range want {
		if c := findPodCondition(st.Conditions, typ); c == nil || c.Status != status {
			t.Errorf("condition %s = %+v, want %s", typ, c, status)
		}
	}
}

func findPodCondition(cs []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// TestTheStatusSaysWhichGenerationItIsOf: observedGeneration, of the
// status and of each condition the kubelet writes, is the pod's
// generation (PodObservedGenerationTracking), and never goes back.
func TestTheStatusSaysWhichGenerationItIsOf(t *testing.T) {
	tests := []struct {
		name                 string
		generation, observed int64
		want                 int64
	}{
		{"a new pod's status is of generation 1", 1, 0, 1},
		{"after spec updates, the status follows the generation", 500, 499, 500},
		{"a stale copy of the pod does not take it back", 3, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := newTestPod()
			pod.Generation, pod.Status.ObservedGeneration = tt.generation, tt.observed
			st := status.GeneratePodStatus(pod, nil, nil, hostIP, t0)
			if st.ObservedGeneration != tt.want {
				t.Errorf("status.observedGeneration = %d, want %d", st.ObservedGeneration, tt.want)
			}
			for _, c := range st.Conditions {
				if c.ObservedGeneration != tt.generation {
					t.Errorf("condition %s observedGeneration = %d, want %d", c.Type, c.ObservedGeneration, tt.generation)
				}
			}
		})
	}
}

// An init container that completed is ready; a sidecar's readiness is
// its probes'.
func TestACompletedInitContainerIsReady(t *testing.T) {
	pod := newTestPod()
	always := corev1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1.36"}, {Name: "side", Image: "busybox:1.36", RestartPolicy: &always}}
	sb := &kubecontainer.PodSandbox{ID: "sb", Ready: true, IP: "10.244.1.2", Containers: map[string]*kubecontainer.Container{
		"init": {ID: "mkube://init", RawID: "init", Name: "init", Image: "busybox:1.36", State: runtimeapi.ContainerState_CONTAINER_EXITED, Reason: "Completed"},
		"side": {ID: "mkube://side", RawID: "side", Name: "side", Image: "busybox:1.36", State: runtimeapi.ContainerState_CONTAINER_RUNNING, NotReady: true},
	}}
	st := status.GeneratePodStatus(pod, sb, nil, hostIP, t0)
	if !st.InitContainerStatuses[0].Ready || st.InitContainerStatuses[1].Ready {
		t.Errorf("init ready %v (want true), sidecar ready %v (want false: its probe)", st.InitContainerStatuses[0].Ready, st.InitContainerStatuses[1].Ready)
	}
}

// An ephemeral container has its own status list, leaves the phase and
// readiness alone, and is never restarted whatever the pod's policy.
func TestAnEphemeralContainer(t *testing.T) {
	pod := newTestPod()
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox:1.36"}}}
	_, sb := startAll(t, pod)
	sb.Containers["debugger"] = &kubecontainer.Container{ID: "mkube://dbg", RawID: "dbg", Name: "debugger", Image: "busybox:1.36",
		State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 1, Reason: "Error"}
	st := status.GeneratePodStatus(pod, sb, nil, hostIP, t0)
	if len(st.EphemeralContainerStatuses) != 1 || st.EphemeralContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("ephemeralContainerStatuses %+v, want the debugger, terminated", st.EphemeralContainerStatuses)
	}
	if st.Phase != corev1.PodRunning || findPodCondition(st.Conditions, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Errorf("phase %s, Ready %s: an ephemeral container that exited must not change them", st.Phase, findPodCondition(st.Conditions, corev1.PodReady).Status)
	}
	if p := restartPolicyOf(pod, "debugger"); p != corev1.RestartPolicyNever {
		t.Errorf("restart policy of an ephemeral container = %s, want Never", p)
	}
}
