package resourcequota_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/resourcequota"
	"github.com/mkube/mkube/internal/quota"
	"github.com/mkube/mkube/internal/testserver"
)

// The controller runs against a real API server, whose ResourceQuota
// admission plugin charges what the test creates, with a fake clock for
// the full resyncs. Each step waits for the status it expects before the
// next, so the controller is idle whenever the test writes: its retries
// run on the fake clock too, and a conflict would wait for a Step.

func resources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pairs {
		name, q, _ := strings.Cut(p, "=")
		out[corev1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

func getQuota(t *testing.T, c *client.Client, name string) *corev1.ResourceQuota {
	t.Helper()
	q := &corev1.ResourceQuota{}
	if err := c.Get(context.Background(), resourcequota.ResourceQuotas, "default", name, q); err != nil {
		t.Fatal(err)
	}
	return q
}

// waitUsed waits until the quota's status.hard is its spec.hard and its
// status.used is exactly want.
func waitUsed(t *testing.T, c *client.Client, name string, want corev1.ResourceList) {
	t.Helper()
	testserver.Eventually(t, name+" used "+quota.Format(want), func() (bool, string) {
		q := getQuota(t, c, name)
		ok := quota.Equals(q.Status.Hard, q.Spec.Hard) && quota.Equals(q.Status.Used, want)
		return ok, "hard " + quota.Format(q.Status.Hard) + ", used " + quota.Format(q.Status.Used)
	})
}

func newPod(name string, cpu string) *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: resources("cpu=" + cpu)}}}}}
}

func TestTheQuotaControllerCountsAndGivesBack(t *testing.T) {
	c := client.New(testserver.Start(t), "resourcequota-test")
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	d := controller.NewDeps(c, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})), clk)
	ctrl := resourcequota.New(d, resourcequota.Options{Workers: 1, SyncPeriod: time.Minute})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)

	// kubectl create quota compute --hard=pods=2,requests.cpu=1,count/pods=5,count/replicasets.apps=1,resourcequotas=3
	hard := resources("pods=2", "requests.cpu=1", "count/pods=5", "count/replicasets.apps=1", "resourcequotas=3")
	q := &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: "default"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if err := c.Create(ctx, resourcequota.ResourceQuotas, "default", q, q); err != nil {
		t.Fatal(err)
	}
	t.Run("a new quota gets status.hard and a first count, itself among the quotas", func(t *testing.T) {
		waitUsed(t, c, "compute", resources("pods=0", "requests.cpu=0", "count/pods=0", "count/replicasets.apps=0", "resourcequotas=1"))
	})

	for _, p := range []*corev1.Pod{newPod("a", "500m"), newPod("b", "250m")} {
		if err := c.Create(ctx, client.Pods, "default", p, p); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("admission charges the pods it lets in", func(t *testing.T) {
		waitUsed(t, c, "compute", resources("pods=2", "requests.cpu=750m", "count/pods=2", "count/replicasets.apps=0", "resourcequotas=1"))
		err := c.Create(ctx, client.Pods, "default", newPod("c", "100m"), nil)
		want := `pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("a third pod: %v, want %s", err, want)
		}
	})

	t.Run("a pod that finishes gives back its compute but not its object count", func(t *testing.T) {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.Pods, "default", "a", pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodSucceeded
		if err := c.UpdateStatus(ctx, client.Pods, "default", "a", pod, nil); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, c, "compute", resources("pods=1", "requests.cpu=250m", "count/pods=2", "count/replicasets.apps=0", "resourcequotas=1"))
	})

	t.Run("a deleted pod gives back everything", func(t *testing.T) {
		if err := c.Delete(ctx, client.Pods, "default", "b", &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, c, "compute", resources("pods=0", "requests.cpu=0", "count/pods=1", "count/replicasets.apps=0", "resourcequotas=1"))
	})

	t.Run("a ReplicaSet is counted by count/replicasets.apps, and given back when deleted", func(t *testing.T) {
		rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
		if err := c.Create(ctx, client.ReplicaSets, "default", rs, nil); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, c, "compute", resources("pods=0", "requests.cpu=0", "count/pods=1", "count/replicasets.apps=1", "resourcequotas=1"))
		if err := c.Delete(ctx, client.ReplicaSets, "default", "web", &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, c, "compute", resources("pods=0", "requests.cpu=0", "count/pods=1", "count/replicasets.apps=0", "resourcequotas=1"))
	})

	t.Run("a new spec.hard is copied to status.hard and counted at once", func(t *testing.T) {
		q := getQuota(t, c, "compute")
		q.Spec.Hard = resources("pods=4", "count/pods=5")
		if err := c.Update(ctx, resourcequota.ResourceQuotas, "default", "compute", q, nil); err != nil {
			t.Fatal(err)
		}
		waitUsed(t, c, "compute", resources("pods=0", "count/pods=1"))
	})

	t.Run("a status someone overwrote is put right by the next full resync", func(t *testing.T) {
		q := getQuota(t, c, "compute")
		q.Status.Used = resources("pods=3", "count/pods=3")
		if err := c.UpdateStatus(ctx, resourcequota.ResourceQuotas, "default", "compute", q, nil); err != nil {
			t.Fatal(err)
		}
		// Status changes alone are not watched (as in Kubernetes): only
		// the resync ticker, on the fake clock, brings the recount. Each
		// look steps it a period on, since a tick that comes before the
		// controller's cache has seen the overwrite finds nothing wrong.
		want := resources("pods=0", "count/pods=1")
		testserver.Eventually(t, "the resync puts used back to "+quota.Format(want), func() (bool, string) {
			clk.Step(time.Minute)
			q := getQuota(t, c, "compute")
			return quota.Equals(q.Status.Used, want), "used " + quota.Format(q.Status.Used)
		})
	})
}
