package job

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/testserver"
)

// The sync tests run the controller against a real API server (embedded
// etcd, the apiserver package, HTTP), with its informers running but not
// its workers: the test calls sync itself, once the caches have caught
// up with the server, and plays the kubelet by writing pod statuses. The
// controller's clock is fake, so backoffs and deadlines pass when the
// test steps it.

type harness struct {
	t     *testing.T
	c     *client.Client
	ctrl  *Controller
	clock *clocktesting.FakeClock
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c := client.New(testserver.Start(t), "job-test")
	clk := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	d := controller.NewDeps(c, log, clk)
	// Events are named after the time they happen: on the real clock,
	// so that two events of one fake instant do not share a name.
	d.Recorder = record.New(c, "controller-manager", "", log)
	h := &harness{t: t, c: c, ctrl: New(d, Options{}), clock: clk}
	testserver.Background(t, d.Informers.Run) // the informers only: the test syncs
	testserver.Background(t, d.Recorder.Run)  // events reach the server
	if !client.WaitForSync(context.Background(), h.ctrl.jobs, h.ctrl.pods) {
		t.Fatal("informers did not sync")
	}
	return h
}

// testJob is a Job of the busybox pods the conformance tests run.
func testJob(name string, mutate ...func(*batchv1.Job)) *batchv1.Job {
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", "exit 0"}}},
		}}},
	}
	for _, m := range mutate {
		m(job)
	}
	return job
}

func withCounts(completions, parallelism int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Spec.Completions, j.Spec.Parallelism = ptr.To(completions), ptr.To(parallelism)
	}
}

func indexedJob(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }

// onNode binds the pods to node01 from the start, so that deleting one
// is graceful: it stays, terminating, until the kubelet (the test, in
// kill) has stopped it.
func onNode(j *batchv1.Job) { j.Spec.Template.Spec.NodeName = "node01" }

func (h *harness) create(job *batchv1.Job) *batchv1.Job {
	h.t.Helper()
	if err := h.c.Create(context.Background(), client.Jobs, job.Namespace, job, job); err != nil {
		h.t.Fatal(err)
	}
	return job
}

// sync waits for the caches to show what the server has, then syncs.
func (h *harness) sync(name string) error {
	h.t.Helper()
	h.settle()
	return h.ctrl.sync(context.Background(), "default/"+name)
}

// mustSync is sync that must succeed.
func (h *harness) mustSync(name string) {
	h.t.Helper()
	if err := h.sync(name); err != nil {
		h.t.Fatalf("sync %s: %v", name, err)
	}
}

// settle waits until the informers' caches hold exactly the server's
// Jobs and pods, at the server's resourceVersions, and the handlers have
// seen them (the expectations are met).
func (h *harness) settle() {
	h.t.Helper()
	testserver.Eventually(h.t, "the caches catch up with the server", func() (bool, string) {
		var jobs batchv1.JobList
		var pods corev1.PodList
		ctx := context.Background()
		if h.c.List(ctx, client.Jobs, "default", client.ListOptions{}, &jobs) != nil ||
			h.c.List(ctx, client.Pods, "default", client.ListOptions{}, &pods) != nil {
			return false, "list failed"
		}
		want := map[string]string{}
		for i := range jobs.Items {
			want["job "+client.KeyOf(&jobs.Items[i])] = jobs.Items[i].ResourceVersion
		}
		for i := range pods.Items {
			want["pod "+client.KeyOf(&pods.Items[i])] = pods.Items[i].ResourceVersion
		}
		got := map[string]string{}
		for kind, inf := range map[string]*client.Informer{"job": h.ctrl.jobs, "pod": h.ctrl.pods} {
			for _, obj := range inf.Cache().List() {
				got[kind+" "+client.KeyOf(obj)] = obj.(metav1.Object).GetResourceVersion()
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return false, fmt.Sprintf("server %v, cache %v", want, got)
		}
		for i := range jobs.Items {
			if !h.ctrl.exp.satisfied(client.KeyOf(&jobs.Items[i])) {
				return false, "expectations of " + jobs.Items[i].Name + " not met"
			}
		}
		return true, ""
	})
}

func (h *harness) job(name string) *batchv1.Job {
	h.t.Helper()
	job := &batchv1.Job{}
	if err := h.c.Get(context.Background(), client.Jobs, "default", name, job); err != nil {
		h.t.Fatal(err)
	}
	return job
}

// pod reads a pod afresh (decoding into a used object would keep the
// fields the answer leaves out).
func (h *harness) pod(name string) *corev1.Pod {
	h.t.Helper()
	pod := &corev1.Pod{}
	if err := h.c.Get(context.Background(), client.Pods, "default", name, pod); err != nil {
		h.t.Fatal(err)
	}
	return pod
}

// pods are the pods the Job controls, by name.
func (h *harness) pods(job *batchv1.Job) []*corev1.Pod {
	h.t.Helper()
	var list corev1.PodList
	if err := h.c.List(context.Background(), client.Pods, "default", client.ListOptions{}, &list); err != nil {
		h.t.Fatal(err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == job.UID {
			out = append(out, &list.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// runningPods are the Job's pods not finished nor being deleted.
func (h *harness) runningPods(job *batchv1.Job) []*corev1.Pod {
	return activePods(h.pods(job))
}

// finish plays the kubelet: the pod's container ended with exitCode, and
// the pod is Succeeded (0) or Failed, as restartPolicy Never has it.
func (h *harness) finish(pod *corev1.Pod, exitCode int32, conditions ...corev1.PodCondition) {
	h.t.Helper()
	now := metav1.NewTime(h.clock.Now())
	phase := corev1.PodSucceeded
	if exitCode != 0 {
		phase = corev1.PodFailed
	}
	pod.Status = corev1.PodStatus{Phase: phase, StartTime: &now,
		Conditions: append([]corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}}, conditions...),
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, FinishedAt: now}}}}}
	if err := h.c.UpdateStatus(context.Background(), client.Pods, pod.Namespace, pod.Name, pod, pod); err != nil {
		h.t.Fatal(err)
	}
}

// kill plays the kubelet for a pod being deleted: its container is
// stopped (SIGTERM, exit code 143) and the pod deleted for good.
func (h *harness) kill(pod *corev1.Pod) {
	h.t.Helper()
	h.finish(pod, 143)
	err := h.c.Delete(context.Background(), client.Pods, pod.Namespace, pod.Name, &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil {
		h.t.Fatal(err)
	}
}

// ready plays the kubelet for a pod that runs and is ready.
func (h *harness) ready(pod *corev1.Pod) {
	h.t.Helper()
	now := metav1.NewTime(h.clock.Now())
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if err := h.c.UpdateStatus(context.Background(), client.Pods, pod.Namespace, pod.Name, pod, pod); err != nil {
		h.t.Fatal(err)
	}
}

// wantEvents waits until the Job's events are want, their reasons in
// the order they first happened; an event repeated n times (the same
// reason and message, which the recorder aggregates) counts n times at
// its first place. Events are sent in the background.
func (h *harness) wantEvents(job *batchv1.Job, want ...string) {
	h.t.Helper()
	testserver.Eventually(h.t, "the Job's events are "+strings.Join(want, ","), func() (bool, string) {
		var list corev1.EventList
		if err := h.c.List(context.Background(), client.Events, "default", client.ListOptions{}, &list); err != nil {
			return false, err.Error()
		}
		sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].FirstTimestamp.Before(&list.Items[j].FirstTimestamp) })
		var got []string
		for _, e := range list.Items {
			if e.InvolvedObject.UID == job.UID {
				for range e.Count {
					got = append(got, e.Reason)
				}
			}
		}
		return slices.Equal(got, want), strings.Join(got, ",")
	})
}

func condition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	return findCondition(job.Status.Conditions, t)
}

// conditions lists the Job's True conditions as "Type/Reason".
func conditions(job *batchv1.Job) []string {
	var out []string
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, string(c.Type)+"/"+c.Reason)
		}
	}
	return out
}
