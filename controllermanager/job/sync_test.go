package job

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
)

func TestAJobRunsParallelismPodsUntilCompletions(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("pi", withCounts(3, 2)))
	h.mustSync("pi")

	pods := h.pods(job)
	if len(pods) != 2 {
		t.Fatalf("%d pods, want parallelism 2", len(pods))
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "Job" || ref.Name != "pi" || ref.UID != job.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("pod %s: controller %+v, want the Job", p.Name, ref)
		}
		if !slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			t.Errorf("pod %s has no tracking finalizer: %v", p.Name, p.Finalizers)
		}
		if p.Labels[batchv1.JobNameLabel] != "pi" || p.Labels[batchv1.ControllerUidLabel] != string(job.UID) {
			t.Errorf("pod %s labels %v, want the template's generated ones", p.Name, p.Labels)
		}
	}
	st := h.job("pi").Status
	if st.Active != 2 || st.StartTime == nil || ptr.Deref(st.Ready, -1) != 0 || ptr.Deref(st.Terminating, -1) != 0 {
		t.Errorf("status %+v, want active 2, ready 0, terminating 0 and a startTime", st)
	}

	// One pod succeeds: it is counted, its finalizer goes, and a third
	// pod starts for the last completion.
	h.finish(pods[0], 0)
	h.mustSync("pi")
	st = h.job("pi").Status
	if st.Succeeded != 1 || st.Active != 2 || len(st.UncountedTerminatedPods.Succeeded) != 0 {
		t.Errorf("status %+v, want succeeded 1, active 2, nothing uncounted", st)
	}
	if n := len(h.pods(job)); n != 3 {
		t.Fatalf("%d pods, want 3", n)
	}
	if counted := h.pod(pods[0].Name); slices.Contains(counted.Finalizers, batchv1.JobTrackingFinalizer) {
		t.Errorf("the counted pod keeps its finalizer: %v", counted.Finalizers)
	}

	// The other two succeed: SuccessCriteriaMet, then Complete.
	for _, p := range h.runningPods(job) {
		h.finish(p, 0)
	}
	h.mustSync("pi")
	job = h.job("pi")
	if got := conditions(job); !slices.Equal(got, []string{"SuccessCriteriaMet/CompletionsReached", "Complete/CompletionsReached"}) {
		t.Errorf("conditions %v, want SuccessCriteriaMet then Complete", got)
	}
	if c := condition(job, batchv1.JobComplete); c == nil || c.Message != "Reached expected number of succeeded pods" {
		t.Errorf("Complete condition %+v", c)
	}
	if job.Status.Succeeded != 3 || job.Status.Active != 0 || job.Status.CompletionTime == nil {
		t.Errorf("status %+v, want succeeded 3, active 0, a completionTime", job.Status)
	}
	h.wantEvents(job, "SuccessfulCreate", "SuccessfulCreate", "SuccessfulCreate", "Completed")
	if err := h.sync("pi"); err != nil || len(h.pods(job)) != 3 {
		t.Errorf("a finished Job is not run again: %v, %d pods", err, len(h.pods(job)))
	}
}

func TestAFailedPodIsReplacedAfterTheBackoff(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("flaky"))
	h.mustSync("flaky")
	h.finish(h.pods(job)[0], 1)
	h.mustSync("flaky")
	if st := h.job("flaky").Status; st.Failed != 1 || st.Active != 0 || len(h.runningPods(job)) != 0 {
		t.Fatalf("status %+v, %d running: want failed 1 and no replacement during the 10s backoff", st, len(h.runningPods(job)))
	}
	h.clock.Step(9 * time.Second)
	h.mustSync("flaky")
	if n := len(h.runningPods(job)); n != 0 {
		t.Fatalf("%d pods after 9s, want the backoff of 10s", n)
	}
	h.clock.Step(time.Second)
	h.mustSync("flaky")
	if n := len(h.runningPods(job)); n != 1 {
		t.Fatalf("%d pods after 10s, want the replacement", n)
	}
	// A second failure doubles the backoff.
	h.finish(h.runningPods(job)[0], 1)
	h.mustSync("flaky")
	h.clock.Step(19 * time.Second)
	h.mustSync("flaky")
	if n := len(h.runningPods(job)); n != 0 {
		t.Fatalf("%d pods 19s after the second failure, want 20s of backoff", n)
	}
	h.clock.Step(time.Second)
	h.mustSync("flaky")
	if n := len(h.runningPods(job)); n != 1 {
		t.Fatalf("%d pods 20s after the second failure, want the replacement", n)
	}
}

func TestAJobFailsWhenItExceedsItsBackoffLimit(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("doomed", withCounts(2, 2), func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](1) }))
	h.mustSync("doomed")
	pods := h.pods(job)
	h.finish(pods[0], 1)
	h.finish(pods[1], 2)
	h.mustSync("doomed")
	job = h.job("doomed")
	if got := conditions(job); !slices.Equal(got, []string{"FailureTarget/BackoffLimitExceeded", "Failed/BackoffLimitExceeded"}) {
		t.Errorf("conditions %v, want FailureTarget then Failed, BackoffLimitExceeded", got)
	}
	if c := condition(job, batchv1.JobFailed); c == nil || c.Message != "Job has reached the specified backoff limit" {
		t.Errorf("Failed condition %+v", c)
	}
	if job.Status.Failed != 2 || job.Status.CompletionTime != nil || ptr.Deref(job.Status.Ready, -1) != 0 {
		t.Errorf("status %+v, want failed 2, no completionTime", job.Status)
	}
	h.wantEvents(job, "SuccessfulCreate", "SuccessfulCreate", "BackoffLimitExceeded")
}

func TestAFailingJobStopsItsRunningPodsBeforeItFails(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("half", withCounts(4, 2), onNode, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](0) }))
	h.mustSync("half")
	pods := h.pods(job)
	h.ready(pods[1])
	h.finish(pods[0], 1)
	h.mustSync("half")
	job = h.job("half")
	// The running pod is being deleted: the Job is FailureTarget, not
	// Failed, until that pod has stopped. It is counted failed already,
	// and lets go of its finalizer: the Job is ending.
	if got := conditions(job); !slices.Equal(got, []string{"FailureTarget/BackoffLimitExceeded"}) {
		t.Fatalf("conditions %v, want FailureTarget only while a pod terminates", got)
	}
	if st := job.Status; st.Active != 0 || ptr.Deref(st.Terminating, 0) != 1 || ptr.Deref(st.Ready, -1) != 0 || st.Failed != 2 {
		t.Errorf("status %+v, want active 0, ready 0, terminating 1, failed 2", st)
	}
	stopping := h.pods(job)[1]
	if stopping.Name != pods[1].Name || stopping.DeletionTimestamp == nil || slices.Contains(stopping.Finalizers, batchv1.JobTrackingFinalizer) {
		t.Fatalf("pod %s: deletionTimestamp %v, finalizers %v; want the running pod deleted, counted", stopping.Name, stopping.DeletionTimestamp, stopping.Finalizers)
	}
	h.kill(stopping)
	h.mustSync("half")
	job = h.job("half")
	if got := conditions(job); !slices.Equal(got, []string{"FailureTarget/BackoffLimitExceeded", "Failed/BackoffLimitExceeded"}) {
		t.Errorf("conditions %v, want Failed once the pod stopped", got)
	}
	if job.Status.Failed != 2 || ptr.Deref(job.Status.Terminating, -1) != 0 {
		t.Errorf("status %+v, want both pods failed, none terminating", job.Status)
	}
}

func TestAnIndexedJobRunsEachIndexOnce(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("idx", withCounts(3, 2), indexedJob))
	h.mustSync("idx")
	pods := h.pods(job)
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	for i, p := range pods {
		ix := strconv.Itoa(i)
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] != ix || p.Labels[batchv1.JobCompletionIndexAnnotation] != ix {
			t.Errorf("pod %s: annotations %v, labels %v, want index %s", p.Name, p.Annotations, p.Labels, ix)
		}
		if p.Spec.Hostname != "idx-"+ix || p.GenerateName != "idx-"+ix+"-" {
			t.Errorf("pod %s: hostname %q generateName %q, want idx-%s", p.Name, p.Spec.Hostname, p.GenerateName, ix)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-completion-index']" {
			t.Errorf("pod %s env %+v, want JOB_COMPLETION_INDEX from the index label", p.Name, env)
		}
	}
	// Index 1 succeeds, then index 0 fails: 2 starts, 0 is retried.
	h.finish(pods[1], 0)
	h.mustSync("idx")
	if got := h.job("idx").Status.CompletedIndexes; got != "1" {
		t.Errorf("completedIndexes %q, want 1", got)
	}
	running := h.runningPods(job)
	if len(running) != 2 || completionIndex(running[1]) != 2 {
		t.Fatalf("running indexes %v, want 0 and 2", indexesOf(running))
	}
	h.finish(running[0], 1)
	h.finish(running[1], 0)
	h.clock.Step(10 * time.Second) // the failure backoff
	h.mustSync("idx")
	h.mustSync("idx")
	running = h.runningPods(job)
	if len(running) != 1 || completionIndex(running[0]) != 0 {
		t.Fatalf("running indexes %v, want 0 again", indexesOf(running))
	}
	h.finish(running[0], 0)
	h.mustSync("idx")
	job = h.job("idx")
	if job.Status.CompletedIndexes != "0-2" || job.Status.Succeeded != 3 || job.Status.Failed != 1 || !isFinished(job) {
		t.Errorf("status %+v, want indexes 0-2 complete, 1 failure", job.Status)
	}
}

func TestPodFailurePolicy(t *testing.T) {
	rule := func(action batchv1.PodFailurePolicyAction, r batchv1.PodFailurePolicyRule) func(*batchv1.Job) {
		return func(j *batchv1.Job) {
			r.Action = action
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{r}}
			j.Spec.BackoffLimit = ptr.To[int32](0)
		}
	}
	onExit := batchv1.PodFailurePolicyRule{OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{42}}}
	onDisruption := batchv1.PodFailurePolicyRule{OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: "True"}}}
	disrupted := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}
	tests := []struct {
		name       string
		policy     func(*batchv1.Job)
		exitCode   int32
		conditions []corev1.PodCondition
		want       []string // the Job's True conditions after the sync
		failed     int32
	}{
		{"FailJob on exit code 42 fails the Job at once, naming the container",
			rule(batchv1.PodFailurePolicyActionFailJob, onExit), 42, nil,
			[]string{"FailureTarget/PodFailurePolicy", "Failed/PodFailurePolicy"}, 1},
		{"Ignore on the DisruptionTarget condition does not count the failure",
			rule(batchv1.PodFailurePolicyActionIgnore, onDisruption), 137, []corev1.PodCondition{disrupted}, nil, 0},
		{"an exit code no rule matches counts against backoffLimit",
			rule(batchv1.PodFailurePolicyActionIgnore, onExit), 1, nil,
			[]string{"FailureTarget/BackoffLimitExceeded", "Failed/BackoffLimitExceeded"}, 1},
		{"Count counts",
			rule(batchv1.PodFailurePolicyActionCount, onExit), 42, nil,
			[]string{"FailureTarget/BackoffLimitExceeded", "Failed/BackoffLimitExceeded"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			job := h.create(testJob("policy", tt.policy))
			h.mustSync("policy")
			h.finish(h.pods(job)[0], tt.exitCode, tt.conditions...)
			h.mustSync("policy")
			job = h.job("policy")
			if got := conditions(job); !slices.Equal(got, tt.want) || job.Status.Failed != tt.failed {
				t.Errorf("conditions %v, failed %d; want %v, %d", got, job.Status.Failed, tt.want, tt.failed)
			}
			if tt.want != nil && tt.want[0] == "FailureTarget/PodFailurePolicy" {
				want := "Container c for pod default/" + h.pods(job)[0].Name + " failed with exit code 42 matching FailJob rule at index 0"
				if c := condition(job, batchv1.JobFailed); c.Message != want {
					t.Errorf("message %q, want %q", c.Message, want)
				}
			}
		})
	}
}

func TestSuspendingAJobDeletesItsPodsAndResumingStartsThemAgain(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("nap", withCounts(4, 2), func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }))
	h.mustSync("nap")
	job = h.job("nap")
	if len(h.pods(job)) != 0 || !slices.Equal(conditions(job), []string{"Suspended/JobSuspended"}) || job.Status.StartTime != nil {
		t.Fatalf("%d pods, conditions %v, startTime %v: want none, Suspended, none", len(h.pods(job)), conditions(job), job.Status.StartTime)
	}
	if ptr.Deref(job.Status.Ready, -1) != 0 {
		t.Errorf("ready %v, want 0 even for a suspended Job", job.Status.Ready)
	}

	job.Spec.Suspend = ptr.To(false)
	if err := h.c.Update(context.Background(), client.Jobs, "default", "nap", job, job); err != nil {
		t.Fatal(err)
	}
	h.mustSync("nap")
	job = h.job("nap")
	if c := condition(job, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "JobResumed" || job.Status.StartTime == nil {
		t.Fatalf("suspended condition %+v, startTime %v: want False JobResumed and a start", c, job.Status.StartTime)
	}
	if n := len(h.runningPods(job)); n != 2 {
		t.Fatalf("%d pods after resuming, want 2", n)
	}

	job.Spec.Suspend = ptr.To(true)
	if err := h.c.Update(context.Background(), client.Jobs, "default", "nap", job, job); err != nil {
		t.Fatal(err)
	}
	h.mustSync("nap")
	job = h.job("nap")
	for _, p := range h.pods(job) {
		if p.DeletionTimestamp == nil || slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
			t.Errorf("pod %s of a suspended Job: deletionTimestamp %v, finalizers %v; want deleted without the finalizer", p.Name, p.DeletionTimestamp, p.Finalizers)
		}
	}
	if job.Status.Active != 0 || job.Status.Failed != 0 || !hasTrueCondition(job.Status.Conditions, batchv1.JobSuspended) {
		t.Errorf("status %+v: want no active pod, no failure, Suspended", job.Status)
	}
	h.wantEvents(job, "Suspended", "Suspended", "SuccessfulCreate", "SuccessfulCreate", "Resumed", "SuccessfulDelete", "SuccessfulDelete")
}

func TestAJobActiveLongerThanItsDeadlineFails(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("slow", onNode, func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }))
	h.mustSync("slow")
	h.clock.Step(29 * time.Second)
	h.mustSync("slow")
	if isFinished(h.job("slow")) || h.job("slow").Status.Active != 1 {
		t.Fatal("the Job ended before its deadline")
	}
	h.clock.Step(time.Second)
	h.mustSync("slow")
	job = h.job("slow")
	if got := conditions(job); !slices.Equal(got, []string{"FailureTarget/DeadlineExceeded"}) {
		t.Fatalf("conditions %v, want FailureTarget while its pod stops", got)
	}
	h.kill(h.pods(job)[0])
	h.mustSync("slow")
	job = h.job("slow")
	if c := condition(job, batchv1.JobFailed); c == nil || c.Reason != "DeadlineExceeded" || c.Message != "Job was active longer than specified deadline" {
		t.Errorf("Failed condition %+v, want DeadlineExceeded", c)
	}
}

func TestBackoffLimitPerIndexAndMaxFailedIndexes(t *testing.T) {
	tests := []struct {
		name          string
		maxFailed     *int32
		wantReason    string
		wantFailedIx  string
		wantCompleted string
	}{
		{"with every index run, a failed index fails the Job", nil, batchv1.JobReasonFailedIndexes, "1", "0"},
		{"more failed indexes than maxFailedIndexes fail the Job at once", ptr.To[int32](0), batchv1.JobReasonMaxFailedIndexesExceeded, "1", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			job := h.create(testJob("per-index", withCounts(2, 2), indexedJob, func(j *batchv1.Job) {
				j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptr.To[int32](1), tt.maxFailed
			}))
			h.mustSync("per-index")
			pods := h.pods(job)
			h.finish(pods[0], 0)
			h.finish(pods[1], 1) // index 1, first failure: retried
			h.mustSync("per-index")
			h.clock.Step(10 * time.Second)
			h.mustSync("per-index")
			var retry *corev1.Pod
			for _, p := range h.runningPods(job) {
				retry = p
			}
			if retry == nil || completionIndex(retry) != 1 || retry.Annotations[batchv1.JobIndexFailureCountAnnotation] != "1" {
				t.Fatalf("retry %+v, want index 1 with failure count 1", retry)
			}
			h.finish(retry, 1) // second failure: the index has used its limit
			h.mustSync("per-index")
			job = h.job("per-index")
			if c := condition(job, batchv1.JobFailed); c == nil || c.Reason != tt.wantReason {
				t.Errorf("conditions %v, want Failed/%s", conditions(job), tt.wantReason)
			}
			if ptr.Deref(job.Status.FailedIndexes, "") != tt.wantFailedIx || job.Status.CompletedIndexes != tt.wantCompleted || job.Status.Failed != 2 {
				t.Errorf("status %+v", job.Status)
			}
		})
	}
}

func TestASuccessPolicyCompletesAnIndexedJobEarly(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("leader", withCounts(3, 3), indexedJob, onNode, func(j *batchv1.Job) {
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	}))
	h.mustSync("leader")
	pods := h.pods(job)
	h.finish(pods[0], 0) // the leader, index 0
	h.mustSync("leader")
	job = h.job("leader")
	if got := conditions(job); !slices.Equal(got, []string{"SuccessCriteriaMet/SuccessPolicy"}) {
		t.Fatalf("conditions %v, want SuccessCriteriaMet while the workers stop", got)
	}
	if c := condition(job, batchv1.JobSuccessCriteriaMet); c.Message != "Matched rules at index 0" {
		t.Errorf("message %q", c.Message)
	}
	for _, p := range h.pods(job)[1:] {
		if p.DeletionTimestamp == nil {
			t.Fatalf("worker %s still runs", p.Name)
		}
		h.kill(p)
	}
	h.mustSync("leader")
	job = h.job("leader")
	if c := condition(job, batchv1.JobComplete); c == nil || c.Reason != batchv1.JobReasonSuccessPolicy || job.Status.CompletedIndexes != "0" {
		t.Errorf("conditions %v, completedIndexes %q: want Complete/SuccessPolicy with index 0", conditions(job), job.Status.CompletedIndexes)
	}
}

func TestAJobAdoptsOrphansItsSelectorMatchesAndReleasesOthers(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("adopt", withCounts(4, 2)))
	h.mustSync("adopt")
	pod := h.pods(job)[0]
	ctx := context.Background()
	pod.OwnerReferences = nil
	if err := h.c.Update(ctx, client.Pods, "default", pod.Name, pod, pod); err != nil {
		t.Fatal(err)
	}
	h.mustSync("adopt")
	pod = h.pod(pod.Name)
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != job.UID || !slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {
		t.Fatalf("orphan not adopted with the tracking finalizer: %+v, %v", pod.OwnerReferences, pod.Finalizers)
	}
	if len(h.pods(job)) != 2 {
		t.Errorf("%d pods, want the adopted one counted, no extra", len(h.pods(job)))
	}

	pod.Labels = nil
	if err := h.c.Update(ctx, client.Pods, "default", pod.Name, pod, pod); err != nil {
		t.Fatal(err)
	}
	h.mustSync("adopt")
	if ref := metav1.GetControllerOf(h.pod(pod.Name)); ref != nil {
		t.Errorf("a pod the selector no longer matches is released: %+v", ref)
	}
	h.mustSync("adopt")
	if n := len(h.runningPods(job)); n != 2 {
		t.Errorf("%d pods, want a replacement for the released one", n)
	}
}

func TestTheFinalizerOfAPodWhoseJobIsGoneIsRemoved(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("gone"))
	h.mustSync("gone")
	pod := h.pods(job)[0]
	if err := h.c.Delete(context.Background(), client.Jobs, "default", "gone", nil); err != nil {
		t.Fatal(err)
	}
	h.settle()
	// The worker's part: the Job's deletion queued its pods' selector.
	testserver.Eventually(t, "the deletion queues the orphans", func() (bool, string) { return h.ctrl.orphans.Len() > 0, "" })
	for h.ctrl.orphans.Len() > 0 {
		key, _ := h.ctrl.orphans.Get()
		if err := h.ctrl.syncOrphan(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		h.ctrl.orphans.Done(key)
	}
	if pod = h.pod(pod.Name); slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {
		t.Errorf("the pod of a deleted Job keeps its finalizer: %v", pod.Finalizers)
	}
}

func TestAJobManagedByAnotherControllerIsLeftAlone(t *testing.T) {
	h := newHarness(t)
	job := h.create(testJob("kueue", func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/custom-job-controller") }))
	h.mustSync("kueue")
	if len(h.pods(job)) != 0 || h.job("kueue").Status.StartTime != nil {
		t.Errorf("the built-in controller ran a Job managed by another")
	}
}
