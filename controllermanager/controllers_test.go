package controllermanager_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/controllermanager/rootcacertpublisher"
	"github.com/mkube/mkube/controllermanager/tainteviction"
	"github.com/mkube/mkube/internal/testserver"
)

// These tests run the whole controller manager against a real API server
// and play the kubelet's part by hand: pods get an IP and a Ready
// condition through the status subresource.

func startControllers(t *testing.T) *client.Client {
	c := client.New(testserver.Start(t), "controllers-test")
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c, log, controllermanager.Options{ReplicaSet: replicaset.Options{Workers: 2}, Deployment: deployment.Options{Workers: 2},
			GarbageCollector: garbagecollector.Options{Workers: 2}, TaintEviction: tainteviction.Options{Workers: 1},
			RootCACertPublisher: rootcacertpublisher.Options{CA: []byte(testCA)}})
	})
	return c
}

// runningPod creates a pod and reports it running and ready on node01, as
// a kubelet would.
func runningPod(t *testing.T, c *client.Client, ns, name, ip string, labels map[string]string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	if err := c.Create(ctx, client.Pods, ns, pod, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := c.UpdateStatus(ctx, client.Pods, ns, name, pod, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func TestEndpointsFollowTheReadyPodsOfAService(t *testing.T) {
	c := startControllers(t)
	ctx := context.Background()
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	if err := c.Create(ctx, client.Services, "default", svc, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" || !strings.HasPrefix(svc.Spec.ClusterIP, "10.") {
		t.Fatalf("no ClusterIP allocated: %q", svc.Spec.ClusterIP)
	}
	runningPod(t, c, "default", "web-1", "10.244.1.2", map[string]string{"app": "web"})
	runningPod(t, c, "default", "web-2", "10.244.1.3", map[string]string{"app": "web"})
	runningPod(t, c, "default", "db", "10.244.1.4", map[string]string{"app": "db"})
	endpoints := func() (bool, string) {
		var ep corev1.Endpoints
		if err := c.Get(ctx, client.Endpoints, "default", "web", &ep); err != nil {
			return false, err.Error()
		}
		var got []string
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				for _, p := range s.Ports {
					got = append(got, fmt.Sprintf("%s:%d", a.IP, p.Port))
				}
			}
		}
		return strings.Join(got, ",") == "10.244.1.2:8080,10.244.1.3:8080", strings.Join(got, ",")
	}
	testserver.Eventually(t, "the endpoints list the two web pods at their named port", endpoints)

	// A pod that stops being ready moves to notReadyAddresses.
	patch := []byte(`{"status":{"conditions":[{"type":"Ready","status":"False"}]}}`)
	if err := c.Patch(ctx, client.Pods, "default", "web-2", types.StrategicMergePatchType, patch, nil, "status"); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "web-2 is listed as not ready", func() (bool, string) {
		var ep corev1.Endpoints
		c.Get(ctx, client.Endpoints, "default", "web", &ep)
		return len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 1 && len(ep.Subsets[0].NotReadyAddresses) == 1, fmt.Sprint(ep.Subsets)
	})

	if err := c.Delete(ctx, client.Services, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the endpoints go with their service", func() (bool, string) {
		err := c.Get(ctx, client.Endpoints, "default", "web", &corev1.Endpoints{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func TestADisruptionBudgetLimitsEvictions(t *testing.T) {
	c := startControllers(t)
	ctx := context.Background()
	for i := range 3 {
		runningPod(t, c, "default", fmt.Sprintf("web-%d", i), fmt.Sprintf("10.244.1.%d", i+2), map[string]string{"app": "web"})
	}
	two := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if err := c.Create(ctx, client.PodDisruptionBudgets, "default", pdb, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the budget allows one disruption", func() (bool, string) {
		var got policyv1.PodDisruptionBudget
		c.Get(ctx, client.PodDisruptionBudgets, "default", "web", &got)
		st := got.Status
		return st.ObservedGeneration == got.Generation && st.CurrentHealthy == 3 && st.DesiredHealthy == 2 && st.DisruptionsAllowed == 1, fmt.Sprintf("%+v", st)
	})
	evict := func(name string) error {
		body := map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]string{"name": name, "namespace": "default"}}
		return c.Do(ctx, http.MethodPost, client.Pods.Path("default", name, "eviction"), body, nil)
	}
	if err := evict("web-0"); err != nil {
		t.Fatalf("the first eviction is allowed: %v", err)
	}
	err := evict("web-1")
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("a second eviction would break the budget: got %v, want 429", err)
	}
	data, _ := json.Marshal(err.(*apierrors.StatusError).ErrStatus.Details)
	if !strings.Contains(string(data), string(policyv1.DisruptionBudgetCause)) {
		t.Fatalf("the 429 names the budget as its cause: %s", data)
	}
}

// Deleting a namespace deletes its pods, then, once they are gone,
// everything else in it, then the namespace.
func TestDeletingANamespaceDeletesWhatIsInIt(t *testing.T) {
	c := startControllers(t)
	ctx := context.Background()
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	if err := c.Create(ctx, client.Namespaces, "", ns, nil); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "demo"}}
	if err := c.Do(ctx, http.MethodPost, "/api/v1/namespaces/demo/configmaps", cm, nil); err != nil {
		t.Fatal(err)
	}
	runningPod(t, c, "demo", "web", "10.244.1.9", nil)
	if err := c.Delete(ctx, client.Namespaces, "", "demo", nil); err != nil {
		t.Fatal(err)
	}
	// Terminating: no new content (403), as the NamespaceLifecycle plugin.
	err := c.Do(ctx, http.MethodPost, "/api/v1/namespaces/demo/configmaps",
		&corev1.ConfigMap{TypeMeta: cm.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "demo"}}, nil)
	if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
		t.Fatalf("creating in a terminating namespace: got %v, want 403 (or 404 once gone)", err)
	}
	// The pod is bound to a node, so it is only marked for deletion; play
	// the kubelet and finish it.
	testserver.Eventually(t, "the pod is being deleted", func() (bool, string) {
		var pod corev1.Pod
		err := c.Get(ctx, client.Pods, "demo", "web", &pod)
		return err == nil && pod.DeletionTimestamp != nil, fmt.Sprint(err)
	})
	// Pods go first: the ConfigMap stays while the pod does, and the
	// namespace's conditions say how its deletion goes.
	testserver.Eventually(t, "the namespace's deletion conditions", func() (bool, string) {
		var got corev1.Namespace
		if err := c.Get(ctx, client.Namespaces, "", "demo", &got); err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == corev1.NamespaceDeletionContentFailure {
				return cond.Status == corev1.ConditionFalse && cond.Reason == "ContentDeleted", fmt.Sprint(cond)
			}
		}
		return false, fmt.Sprint(got.Status.Conditions)
	})
	if err := c.Do(ctx, http.MethodGet, "/api/v1/namespaces/demo/configmaps/c", nil, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the ConfigMap went before the pod: %v", err)
	}
	zero := int64(0)
	if err := c.Delete(ctx, client.Pods, "demo", "web", &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the namespace and its content are gone", func() (bool, string) {
		nsErr := c.Get(ctx, client.Namespaces, "", "demo", &corev1.Namespace{})
		var cms corev1.ConfigMapList
		c.Do(ctx, http.MethodGet, "/api/v1/namespaces/demo/configmaps", nil, &cms)
		return apierrors.IsNotFound(nsErr) && len(cms.Items) == 0, fmt.Sprint(nsErr, len(cms.Items))
	})
}

func TestEveryNamespaceHasADefaultServiceAccount(t *testing.T) {
	c := startControllers(t)
	ctx := context.Background()
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if err := c.Create(ctx, client.Namespaces, "", ns, nil); err != nil {
		t.Fatal(err)
	}
	hasDefault := func() (bool, string) {
		err := c.Get(ctx, client.ServiceAccounts, "team-a", "default", &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	}
	testserver.Eventually(t, "the new namespace gets its default ServiceAccount", hasDefault)
	if err := c.Delete(ctx, client.ServiceAccounts, "team-a", "default", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "a deleted default ServiceAccount comes back", hasDefault)
}

// testCA stands for the cluster's CA certificate: the publisher copies
// bytes, it does not read them.
const testCA = "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"

func TestEveryNamespaceGetsTheClusterCA(t *testing.T) {
	c := startControllers(t)
	ctx := context.Background()
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}
	if err := c.Create(ctx, client.Namespaces, "", ns, nil); err != nil {
		t.Fatal(err)
	}
	published := func() (bool, string) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ConfigMaps, "team-b", rootcacertpublisher.Name, &cm); err != nil {
			return false, err.Error()
		}
		return cm.Data[rootcacertpublisher.Key] == testCA, fmt.Sprint(cm.Data)
	}
	testserver.Eventually(t, "kube-root-ca.crt holds the CA in a new namespace", published)
	testserver.Eventually(t, "and in the built-in ones", func() (bool, string) {
		err := c.Get(ctx, client.ConfigMaps, "kube-system", rootcacertpublisher.Name, &corev1.ConfigMap{})
		return err == nil, fmt.Sprint(err)
	})

	// Edited: put back. Deleted: recreated.
	patch := []byte(`{"data":{"ca.crt":"tampered"}}`)
	if err := c.Patch(ctx, client.ConfigMaps, "team-b", rootcacertpublisher.Name, types.MergePatchType, patch, nil, ""); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "an edited kube-root-ca.crt is put back", published)
	if err := c.Delete(ctx, client.ConfigMaps, "team-b", rootcacertpublisher.Name, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "a deleted kube-root-ca.crt comes back", published)
}

// lockedBuffer is a log sink the controllers write to while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Without --root-ca-file, on the plain port (no kubeconfig, so no CA),
// kube-controller-manager still publishes kube-root-ca.crt, with an empty
// ca.crt: the pods that mount a service-account token need the ConfigMap
// to start at all. The controller manager says so at start, as an error.
func TestWithoutACAEveryNamespaceStillGetsKubeRootCAAndTheLogSaysWhy(t *testing.T) {
	c := client.New(testserver.Start(t), "controllers-test")
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	testserver.Background(t, func(ctx context.Context) { controllermanager.Run(ctx, c, log, controllermanager.Options{}) })
	ctx := context.Background()
	testserver.Eventually(t, "kube-root-ca.crt is published in default, with an empty ca.crt", func() (bool, string) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ConfigMaps, "default", rootcacertpublisher.Name, &cm); err != nil {
			return false, err.Error()
		}
		ca, ok := cm.Data[rootcacertpublisher.Key]
		return ok && ca == "", fmt.Sprint(cm.Data)
	})
	if got := logs.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "--root-ca-file") {
		t.Errorf("the log does not say, as an error naming --root-ca-file, that there is no CA:\n%s", got)
	}
}
