package kubelet

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/kubelet/backoff"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/lifecycle"
	"github.com/mkube/mkube/kubelet/prober"
	"github.com/mkube/mkube/kubelet/status"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The restart table of seed 003 §5.3, played KWOK-style: no process runs,
// the runtime's view of the pod (a kubecontainer.PodSandbox and its Containers
// records) is written by hand for each moment, and the kubelet's own code
// turns it into a pod status (status.GeneratePodStatus), a decision (shouldRestart,
// restartsNow with a real backOff on a fake clock) and a CrashLoopBackOff
// waiting state (syncContainer). The STATUS, READY and RESTARTS columns are
// the API server's own table code (core.Pods.Row, which calls the
// unexported podStatusReason), as `kubectl get pods` would print them.
//
// Timeline of every block, after restartEpoch (written +Ns in the file):
//
//	+0s   all containers start (attempt 0)
//	+1s   the kubelet reports them Running (the pod's stored status)
//	+30s  the exiting containers exit
//	+31s  the kubelet syncs: moment "exited", then "decision"
//	+32s  a container that restarts runs again (attempt 1) ...
//	+35s  ... and exits the same way, within the 10 s back-off
//	+36s  the kubelet syncs: moment "crash again"

const restartGolden = "testdata/restart-table.golden"

var restartEpoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return restartEpoch.Add(time.Duration(s) * time.Second) }

type restartExit struct {
	code   int32
	reason string // what mkube's runtime (cri/process.go) reports
}

var (
	exit0   = restartExit{0, "Completed"}
	exit1   = restartExit{1, "Error"}
	oomKill = restartExit{137, "OOMKilled"}
)

type policyPhases map[corev1.RestartPolicy]corev1.PodPhase

// restartScenario is one row: the pod's containers, which of them exit and
// how (the others keep running), what seed 003's table says, and what
// Kubernetes' phase rules (pod-lifecycle, the kubelet's getPhase) give.
type restartScenario struct {
	name       string
	containers []string
	exits      map[string]restartExit
	seed       map[corev1.RestartPolicy]string // "" or nil: the seed has no such row
	k8sExited  policyPhases                    // phase right after the exit
	k8sAgain   policyPhases                    // phase at "crash again", where something restarts
}

var (
	always    = corev1.RestartPolicyAlways
	onFailure = corev1.RestartPolicyOnFailure
	never     = corev1.RestartPolicyNever
)

var restartScenarios = []restartScenario{
	{
		name: "1 container exits 0", containers: []string{"app"}, exits: map[string]restartExit{"app": exit0},
		seed:      map[corev1.RestartPolicy]string{always: "Running", onFailure: "Succeeded", never: "Succeeded"},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodSucceeded, never: corev1.PodSucceeded},
		k8sAgain:  policyPhases{always: corev1.PodRunning},
	},
	{
		name: "1 container exits 1", containers: []string{"app"}, exits: map[string]restartExit{"app": exit1},
		seed:      map[corev1.RestartPolicy]string{always: "Running", onFailure: "Running", never: "Failed"},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning, never: corev1.PodFailed},
		k8sAgain:  policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning},
	},
	{
		// The seed's row "exits non-zero": 137 is non-zero.
		name: "1 container OOM-killed (137)", containers: []string{"app"}, exits: map[string]restartExit{"app": oomKill},
		seed:      map[corev1.RestartPolicy]string{always: "Running", onFailure: "Running", never: "Failed"},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning, never: corev1.PodFailed},
		k8sAgain:  policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning},
	},
	{
		name: "2 containers, app exits 1, second runs", containers: []string{"app", "second"}, exits: map[string]restartExit{"app": exit1},
		seed:      map[corev1.RestartPolicy]string{always: "Running", onFailure: "Running", never: "Running"},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning, never: corev1.PodRunning},
		k8sAgain:  policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning},
	},
	{
		name: "2 containers, app OOM-killed, second runs", containers: []string{"app", "second"}, exits: map[string]restartExit{"app": oomKill},
		seed:      map[corev1.RestartPolicy]string{always: "Running", onFailure: "Running", never: "Failed (Kubernetes: Running while the other container runs)"},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning, never: corev1.PodRunning},
		k8sAgain:  policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning},
	},
	{
		name: "2 containers, both exit 0", containers: []string{"app", "second"}, exits: map[string]restartExit{"app": exit0, "second": exit0},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodSucceeded, never: corev1.PodSucceeded},
		k8sAgain:  policyPhases{always: corev1.PodRunning},
	},
	{
		name: "2 containers, app exits 0, second exits 1", containers: []string{"app", "second"}, exits: map[string]restartExit{"app": exit0, "second": exit1},
		k8sExited: policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning, never: corev1.PodFailed},
		k8sAgain:  policyPhases{always: corev1.PodRunning, onFailure: corev1.PodRunning},
	},
}

func TestRestartTable(t *testing.T) {
	var out bytes.Buffer
	fmt.Fprintln(&out, "# Seed 003 §5.3's restart table as mkube's kubelet plays it: restartPolicy x scenario, at three moments")
	fmt.Fprintln(&out, "# (exited, decision, crash again). Written by TestRestartTable (kubelet/restarttable_test.go), which")
	fmt.Fprintln(&out, "# describes the timeline; regenerate with: go test ./kubelet/ -run RestartTable -update")
	fmt.Fprintf(&out, "# Times are seconds after %s. STATUS/READY/RESTARTS are the API server's `kubectl get pods` cells.\n",
		restartEpoch.Format(time.RFC3339))
	for _, sc := range restartScenarios {
		for _, policy := range []corev1.RestartPolicy{always, onFailure, never} {
			fmt.Fprintln(&out)
			playRestart(t, &out, sc, policy)
		}
	}

	if *update {
		if err := os.MkdirAll(filepath.Dir(restartGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(restartGolden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(restartGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := firstDiff(string(want), out.String()); diff != "" {
		t.Errorf("%s differs from what the kubelet does now (if the change is intended, rerun with -update):\n%s", restartGolden, diff)
	}
}

// playRestart writes one block: scenario sc under policy.
func playRestart(t *testing.T, out *bytes.Buffer, sc restartScenario, policy corev1.RestartPolicy) {
	t.Helper()
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(at(0))
	discard := slog.New(slog.DiscardHandler)
	// Just what syncContainer's exited-container path uses: no runtime,
	// since a container in back-off is not created, and no API server:
	// the recorder only queues its events.
	k := &Kubelet{clock: clk, log: discard, backOff: backoff.New(DefaultBackOffInitial, DefaultBackOffMax, clk),
		recorder: record.New(nil, "kubelet", "node01", discard), queue: workqueue.New[string](clk),
		probes: prober.NewManager(prober.Options{Clock: clk, Log: discard}), admission: lifecycle.NewAdmitter(nil, nil, discard)}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crash", Namespace: "default", UID: "uid-1", CreationTimestamp: metav1.NewTime(at(0))},
		Spec:       corev1.PodSpec{NodeName: "node01", RestartPolicy: policy},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(0))}}},
	}
	sb := &kubecontainer.PodSandbox{ID: "sandbox-1", Ready: true, IP: "10.244.1.2", Containers: map[string]*kubecontainer.Container{}}
	for _, name := range sc.containers {
		c := corev1.Container{Name: name, Image: "busybox:1.36"}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		sb.Containers[name] = &kubecontainer.Container{ID: "mkube://" + name + "-0", RawID: name + "-0", Name: name, Image: c.Image,
			ImageID: imageID(c.Image), State: runtimeapi.ContainerState_CONTAINER_RUNNING, StartedAt: at(0)}
	}
	pod.Status = status.GeneratePodStatus(pod, sb, nil, hostIP, at(1))

	fmt.Fprintf(out, "== restartPolicy=%s | %s ==\n", policy, sc.name)
	if s := sc.seed[policy]; s != "" {
		fmt.Fprintf(out, "seed 003 §5.3: %s\n", s)
	} else {
		fmt.Fprintln(out, "seed 003 §5.3: (no row)")
	}

	// 1. exited: the runtime reports the exits, nothing waits yet.
	for _, name := range sc.containers {
		if e, ok := sc.exits[name]; ok {
			rc := sb.Containers[name]
			rc.State, rc.FinishedAt, rc.ExitCode, rc.Reason = runtimeapi.ContainerState_CONTAINER_EXITED, at(30), e.code, e.reason
		}
	}
	clk.SetTime(at(31))
	pod.Status = status.GeneratePodStatus(pod, sb, nil, hostIP, clk.Now())
	writeMoment(t, out, "exited", 31, pod, sc.k8sExited[policy], sc.name)

	// 2. decision: per exited container, what syncContainer's EXITED case
	// does on this sync.
	fmt.Fprintln(out, "decision")
	var restarted []string
	for _, name := range sc.containers {
		rc := sb.Containers[name]
		if rc.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			continue
		}
		remaining, _ := k.backOff.Wait(backoff.Key(string(pod.UID), name), rc.FinishedAt)
		switch {
		case !shouldRestart(policy, rc.ExitCode):
			fmt.Fprintf(out, "  %-8s stays terminated (shouldRestart=false for exitCode %d)\n", name, rc.ExitCode)
		case k.restartsNow(pod, rc):
			fmt.Fprintf(out, "  %-8s restart now (shouldRestart=true, no back-off yet: wait %s)\n", name, remaining)
			restarted = append(restarted, name)
		default:
			t.Errorf("%s, %s: %s waits %s at its first exit", policy, sc.name, name, remaining)
			fmt.Fprintf(out, "  %-8s back-off: waits %s  <-- a first exit should restart at once\n", name, remaining)
		}
	}

	// 3. crash again: each restarted container is restarted as
	// syncContainer does (back-off armed, attempt 1 replacing attempt 0),
	// and its new instance exits the same way 3 s later.
	if len(restarted) == 0 {
		fmt.Fprintln(out, "crash again: nothing restarts")
		return
	}
	for _, name := range restarted {
		prev := sb.Containers[name]
		k.backOff.Next(backoff.Key(string(pod.UID), name), prev.FinishedAt)
		sb.Containers[name] = &kubecontainer.Container{ID: "mkube://" + name + "-1", RawID: name + "-1", Name: name, Image: prev.Image,
			ImageID: prev.ImageID, State: runtimeapi.ContainerState_CONTAINER_EXITED, Attempt: 1,
			StartedAt: at(32), FinishedAt: at(35), ExitCode: prev.ExitCode, Reason: prev.Reason, Previous: prev}
	}
	clk.SetTime(at(36))
	waiting := map[string]*corev1.ContainerStateWaiting{}
	for _, c := range pod.Spec.Containers {
		if k.restartsNow(pod, sb.Containers[c.Name]) {
			// syncContainer would create a container: there is no runtime here.
			t.Errorf("%s, %s: %s restarts at once after crashing again within the back-off", policy, sc.name, c.Name)
			continue
		}
		w, err := k.syncContainer(ctx, pod, sb, c)
		if err != nil {
			t.Fatalf("%s, %s: syncContainer %s: %v", policy, sc.name, c.Name, err)
		}
		if w != nil {
			waiting[c.Name] = w
		}
	}
	pod.Status = status.GeneratePodStatus(pod, sb, waiting, hostIP, clk.Now())
	writeMoment(t, out, "crash again", 36, pod, sc.k8sAgain[policy], sc.name)
}

// writeMoment writes the pod's phase (checked against Kubernetes' rules),
// its kubectl cells, then a line per container.
func writeMoment(t *testing.T, out *bytes.Buffer, moment string, sec int, pod *corev1.Pod, k8s corev1.PodPhase, scenario string) {
	t.Helper()
	row := core.Pods.Row(pod, at(sec)) // READY, STATUS, RESTARTS, AGE, ...
	check := "(Kubernetes: same)"
	if pod.Status.Phase != k8s {
		check = fmt.Sprintf("<-- Kubernetes: %s", k8s)
		t.Errorf("%s, %s, %s: phase %s, Kubernetes gives %s", pod.Spec.RestartPolicy, scenario, moment, pod.Status.Phase, k8s)
	}
	fmt.Fprintf(out, "%-12s +%ds  phase=%-9s %s  STATUS=%s  READY=%s  RESTARTS=%s\n", moment, sec, pod.Status.Phase, check, row[1], row[0], row[2])
	for _, cs := range pod.Status.ContainerStatuses {
		last := ""
		if lt := cs.LastTerminationState.Terminated; lt != nil {
			last = fmt.Sprintf("  lastState=terminated %s exitCode=%d", lt.Reason, lt.ExitCode)
		}
		fmt.Fprintf(out, "  %-8s %-34s restartCount=%d  ready=%t%s\n", cs.Name, stateString(cs.State), cs.RestartCount, cs.Ready, last)
		if w := cs.State.Waiting; w != nil && w.Message != "" {
			fmt.Fprintf(out, "  %-8s   message: %s\n", "", w.Message)
		}
	}
}

func stateString(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %s exitCode=%d", s.Terminated.Reason, s.Terminated.ExitCode)
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason
	}
	return "(no state)"
}

// firstDiff is "" if want and got are the same, else their first
// differing line.
func firstDiff(want, got string) string {
	ws, gs := bufio.NewScanner(strings.NewReader(want)), bufio.NewScanner(strings.NewReader(got))
	for line := 1; ; line++ {
		wok, gok := ws.Scan(), gs.Scan()
		if !wok && !gok {
			return ""
		}
		w, g := ws.Text(), gs.Text()
		if !wok {
			w = "(end of file)"
		}
		if !gok {
			g = "(end of output)"
		}
		if w != g || wok != gok {
			return fmt.Sprintf("line %d:\n  golden: %s\n  now:    %s", line, w, g)
		}
	}
}
