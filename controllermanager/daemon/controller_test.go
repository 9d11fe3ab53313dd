package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/daemon"
	"github.com/mkube/mkube/internal/testserver"
)

// This file runs the controller against a real API server (embedded etcd,
// HTTP). No scheduler or kubelet runs: the daemon pods stay unbound, each
// for its node by its matchFields affinity, and the test plays the kubelet
// by marking pods running and ready. The API server deletes an unbound
// pod at once.

type cluster struct {
	t *testing.T
	c *client.Client
}

func start(t *testing.T, nodes ...*corev1.Node) *cluster {
	c := client.New(testserver.Start(t), "daemonset-test")
	for _, n := range nodes {
		if err := c.Create(context.Background(), client.Nodes, "", n, nil); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	d := controller.NewDeps(c, log, nil)
	ctrl := daemon.New(d, daemon.Options{})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)
	return &cluster{t: t, c: c}
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// state is what the server says about the DaemonSet, its pods and revisions.
type state struct {
	ds     *appsv1.DaemonSet
	byNode map[string][]*corev1.Pod // live pods, by the node of their affinity
	revs   []appsv1.ControllerRevision
}

func (s state) String() string {
	var nodes []string
	for n, pods := range s.byNode {
		for _, p := range pods {
			nodes = append(nodes, fmt.Sprintf("%s:%s(%s,%s)", n, p.Name, p.Spec.Containers[0].Image, p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]))
		}
	}
	sort.Strings(nodes)
	var revs []string
	for _, r := range s.revs {
		revs = append(revs, fmt.Sprintf("%s=%d", r.Name, r.Revision))
	}
	return fmt.Sprintf("pods %v revisions %v status %+v generation %d", nodes, revs, s.ds.Status, s.ds.Generation)
}

// nodes is the sorted list of nodes with a live pod.
func (s state) nodes() string {
	var out []string
	for n := range s.byNode {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (cl *cluster) read(name string) state {
	cl.t.Helper()
	ctx := context.Background()
	s := state{ds: &appsv1.DaemonSet{}, byNode: map[string][]*corev1.Pod{}}
	if err := cl.c.Get(ctx, client.DaemonSets, "default", name, s.ds); err != nil {
		cl.t.Fatal(err)
	}
	var pods corev1.PodList
	if err := cl.c.List(ctx, client.Pods, "default", client.ListOptions{}, &pods); err != nil {
		cl.t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !metav1.IsControlledBy(p, s.ds) || p.DeletionTimestamp != nil {
			continue
		}
		n := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
		s.byNode[n] = append(s.byNode[n], p)
	}
	var revs appsv1.ControllerRevisionList
	if err := cl.c.List(ctx, client.ControllerRevisions, "default", client.ListOptions{}, &revs); err != nil {
		cl.t.Fatal(err)
	}
	s.revs = revs.Items
	sort.Slice(s.revs, func(i, j int) bool { return s.revs[i].Revision < s.revs[j].Revision })
	return s
}

// until waits for cond, playing the kubelet on every poll: each live pod
// not yet running becomes Running and Ready, as a kubelet reports it.
func (cl *cluster) until(what, name string, cond func(state) bool) state {
	cl.t.Helper()
	var s state
	testserver.Eventually(cl.t, what, func() (bool, string) {
		cl.kubelet()
		s = cl.read(name)
		return cond(s), s.String()
	})
	return s
}

func (cl *cluster) kubelet() {
	ctx := context.Background()
	var pods corev1.PodList
	if err := cl.c.List(ctx, client.Pods, "default", client.ListOptions{}, &pods); err != nil {
		cl.t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase != "" && p.Status.Phase != corev1.PodPending {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if err := cl.c.UpdateStatus(ctx, client.Pods, p.Namespace, p.Name, p, nil); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			cl.t.Fatalf("kubelet: %v", err)
		}
	}
}

func (cl *cluster) patch(res client.Resource, name, patch string) {
	cl.t.Helper()
	if err := cl.c.Patch(context.Background(), res, nsOf(res), name, types.MergePatchType, []byte(patch), nil); err != nil {
		cl.t.Fatal(err)
	}
}

func nsOf(res client.Resource) string {
	if res.Namespaced {
		return "default"
	}
	return ""
}

// images is each node's pod image, "n1=agent:1,n2=agent:2".
func (s state) images() string {
	var out []string
	for n, pods := range s.byNode {
		for _, p := range pods {
			out = append(out, n+"="+p.Spec.Containers[0].Image)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (cl *cluster) events(reason string) []string {
	var list corev1.EventList
	if err := cl.c.List(context.Background(), client.Events, "default", client.ListOptions{}, &list); err != nil {
		cl.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == reason && e.Source.Component == "daemonset-controller" {
			out = append(out, e.Message)
		}
	}
	return out
}

func TestDaemonSetControllerAgainstARealAPIServer(t *testing.T) {
	worker := map[string]string{"role": "worker"}
	cl := start(t, node("n1", worker), node("n2", worker), node("n3", nil))
	ctx := context.Background()
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: corev1.PodSpec{NodeSelector: worker,
					Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}}},
			},
		},
	}
	if err := cl.c.Create(ctx, client.DaemonSets, "default", ds, ds); err != nil {
		t.Fatal(err)
	}
	var firstHash string

	t.Run("each fitting node gets one pod, pinned by affinity and labelled with the revision", func(t *testing.T) {
		s := cl.until("pods on n1 and n2", "agent", func(s state) bool {
			return s.nodes() == "n1,n2" && len(s.byNode["n1"]) == 1 && len(s.byNode["n2"]) == 1 && len(s.revs) == 1
		})
		rev := s.revs[0]
		firstHash = rev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
		if rev.Revision != 1 || rev.Name != "agent-"+firstHash || !metav1.IsControlledBy(&rev, s.ds) {
			t.Errorf("revision %s number %d, want agent-<hash> number 1 owned by the DaemonSet", rev.Name, rev.Revision)
		}
		for n, pods := range s.byNode {
			p := pods[0]
			if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != firstHash || p.Labels["pod-template-generation"] != "1" || p.Spec.NodeName != "" {
				t.Errorf("pod on %s: labels %v, nodeName %q; want hash %s, generation 1, unbound", n, p.Labels, p.Spec.NodeName, firstHash)
			}
		}
		testserver.Eventually(t, "a SuccessfulCreate event per pod", func() (bool, string) {
			got := cl.events("SuccessfulCreate")
			return len(got) == 2 && strings.HasPrefix(got[0], "Created pod: agent-"), fmt.Sprint(got)
		})
	})

	t.Run("status counts the nodes", func(t *testing.T) {
		cl.until("status 2 desired, 2 available", "agent", func(s state) bool {
			st := s.ds.Status
			return st.DesiredNumberScheduled == 2 && st.CurrentNumberScheduled == 2 && st.NumberReady == 2 && st.NumberAvailable == 2 &&
				st.UpdatedNumberScheduled == 2 && st.NumberUnavailable == 0 && st.NumberMisscheduled == 0 && st.ObservedGeneration == s.ds.Generation
		})
	})

	t.Run("labelling a node adds its pod, unlabelling one removes it", func(t *testing.T) {
		cl.patch(client.Nodes, "n3", `{"metadata":{"labels":{"role":"worker"}}}`)
		cl.until("a pod on n3", "agent", func(s state) bool { return s.nodes() == "n1,n2,n3" })
		cl.patch(client.Nodes, "n1", `{"metadata":{"labels":{"role":null}}}`)
		cl.until("n1's pod gone", "agent", func(s state) bool { return s.nodes() == "n2,n3" && s.ds.Status.DesiredNumberScheduled == 2 })
	})

	t.Run("a failed pod is deleted and replaced", func(t *testing.T) {
		s := cl.read("agent")
		p := s.byNode["n2"][0].DeepCopy()
		p.Status.Phase = corev1.PodFailed
		if err := cl.c.UpdateStatus(ctx, client.Pods, "default", p.Name, p, nil); err != nil {
			t.Fatal(err)
		}
		cl.until("a new pod on n2", "agent", func(s state) bool {
			pods := s.byNode["n2"]
			return len(pods) == 1 && pods[0].UID != p.UID && pods[0].Status.Phase == corev1.PodRunning
		})
		testserver.Eventually(t, "a FailedDaemonPod event", func() (bool, string) {
			got := cl.events("FailedDaemonPod")
			return len(got) == 1 && got[0] == "Found failed daemon pod default/"+p.Name+" on node n2, will try to kill it", fmt.Sprint(got)
		})
	})

	t.Run("a new image rolls out as a second revision", func(t *testing.T) {
		cl.patch(client.DaemonSets, "agent", `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"agent:2"}]}}}}`)
		s := cl.until("every pod on agent:2", "agent", func(s state) bool {
			return s.images() == "n2=agent:2,n3=agent:2" && s.ds.Status.UpdatedNumberScheduled == 2 && s.ds.Status.NumberAvailable == 2
		})
		if len(s.revs) != 2 || s.revs[1].Revision != 2 || s.revs[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != firstHash {
			t.Fatalf("revisions %v, want the first and a second numbered 2", s)
		}
		for _, pods := range s.byNode {
			if pods[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != s.revs[1].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] || pods[0].Labels["pod-template-generation"] != "2" {
				t.Errorf("pod %s labels %v, want the second revision's hash and generation 2", pods[0].Name, pods[0].Labels)
			}
		}
	})

	t.Run("going back to the first image makes its revision the newest", func(t *testing.T) {
		cl.patch(client.DaemonSets, "agent", `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"agent:1"}]}}}}`)
		s := cl.until("every pod on agent:1", "agent", func(s state) bool {
			return s.images() == "n2=agent:1,n3=agent:1" && s.ds.Status.UpdatedNumberScheduled == 2 && len(s.revs) == 2 && s.revs[1].Revision == 3
		})
		if cur := s.revs[1]; cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != firstHash {
			t.Errorf("the newest revision is %s, want the first one renumbered 3: %v", cur.Name, s)
		}
	})

	t.Run("revisions beyond revisionHistoryLimit are deleted", func(t *testing.T) {
		cl.patch(client.DaemonSets, "agent", `{"spec":{"revisionHistoryLimit":0}}`)
		s := cl.until("one revision left", "agent", func(s state) bool { return len(s.revs) == 1 })
		if s.revs[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != firstHash {
			t.Errorf("kept %s, want the current revision", s.revs[0].Name)
		}
	})

	t.Run("OnDelete replaces only the pods somebody deletes", func(t *testing.T) {
		cl.patch(client.DaemonSets, "agent", `{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null},"template":{"spec":{"containers":[{"name":"agent","image":"agent:3"}]}}}}`)
		// The limit is 0, but the old revision stays while pods run it.
		cl.until("a revision of agent:3 and status observing it", "agent", func(s state) bool {
			return len(s.revs) == 2 && s.revs[1].Revision == 4 && s.ds.Status.ObservedGeneration == s.ds.Generation && s.ds.Status.UpdatedNumberScheduled == 0
		})
		s := cl.read("agent")
		if s.images() != "n2=agent:1,n3=agent:1" {
			t.Fatalf("pods changed without being deleted: %s", s.images())
		}
		if err := cl.c.Delete(ctx, client.Pods, "default", s.byNode["n3"][0].Name, nil); err != nil {
			t.Fatal(err)
		}
		cl.until("n3 on agent:3, n2 still on agent:1", "agent", func(s state) bool {
			return s.images() == "n2=agent:1,n3=agent:3" && s.ds.Status.UpdatedNumberScheduled == 1
		})
	})

	t.Run("an orphan pod the selector matches is adopted, one whose labels change is released", func(t *testing.T) {
		s := cl.read("agent")
		p := s.byNode["n2"][0]
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "debug"}}})
		if err := cl.c.Patch(ctx, client.Pods, "default", p.Name, types.MergePatchType, patch, nil); err != nil {
			t.Fatal(err)
		}
		cl.until("a new pod on n2 and the old one released", "agent", func(s state) bool {
			return len(s.byNode["n2"]) == 1 && s.byNode["n2"][0].Name != p.Name
		})
		released := &corev1.Pod{}
		if err := cl.c.Get(ctx, client.Pods, "default", p.Name, released); err != nil || metav1.GetControllerOf(released) != nil {
			t.Fatalf("the relabelled pod still has a controller: %v %v", released.OwnerReferences, err)
		}
		// Labelled back, the orphan is adopted; n2 then has two pods, and
		// one goes: the oldest of a node stays (by creationTimestamp, which
		// has seconds only, then by name).
		repl := cl.read("agent").byNode["n2"][0]
		keep, drop := p.Name, repl.Name
		if repl.CreationTimestamp.Before(&p.CreationTimestamp) || (repl.CreationTimestamp.Equal(&p.CreationTimestamp) && repl.Name < p.Name) {
			keep, drop = repl.Name, p.Name
		}
		patch, _ = json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "agent"}}})
		if err := cl.c.Patch(ctx, client.Pods, "default", p.Name, types.MergePatchType, patch, nil); err != nil {
			t.Fatal(err)
		}
		cl.until("the orphan adopted back, the newer of the two pods of n2 deleted", "agent", func(s state) bool {
			err := cl.c.Get(ctx, client.Pods, "default", drop, &corev1.Pod{})
			return len(s.byNode["n2"]) == 1 && s.byNode["n2"][0].Name == keep && apierrors.IsNotFound(err)
		})
		kept := &corev1.Pod{}
		if err := cl.c.Get(ctx, client.Pods, "default", keep, kept); err != nil || metav1.GetControllerOf(kept) == nil {
			t.Errorf("the pod kept, %s, has no controller: %v", keep, err)
		}
		if keep == p.Name {
			return
		}
		// The adopted pod was the one to go: its adoption shows in the
		// controller's event.
		testserver.Eventually(t, "a SuccessfulDelete event of the adopted pod", func() (bool, string) {
			got := cl.events("SuccessfulDelete")
			for _, m := range got {
				if m == "Deleted pod: "+p.Name {
					return true, ""
				}
			}
			return false, fmt.Sprint(got)
		})
	})
}

func TestASurgingUpdateKeepsEveryNodeServed(t *testing.T) {
	cl := start(t, node("n1", nil), node("n2", nil), node("n3", nil))
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "proxy"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "proxy"}},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &zero, MaxSurge: &one}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "proxy"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "proxy", Image: "proxy:1"}}},
			},
		},
	}
	if err := cl.c.Create(context.Background(), client.DaemonSets, "default", ds, ds); err != nil {
		t.Fatal(err)
	}
	// Every old pod available first: an unavailable one would be replaced
	// at once, beyond maxSurge (it serves nothing anyway).
	cl.until("a proxy:1 pod available on each node", "proxy", func(s state) bool {
		return s.images() == "n1=proxy:1,n2=proxy:1,n3=proxy:1" && s.ds.Status.NumberAvailable == 3
	})
	cl.patch(client.DaemonSets, "proxy", `{"spec":{"template":{"spec":{"containers":[{"name":"proxy","image":"proxy:2"}]}}}}`)
	var violations []string
	cl.until("every node on proxy:2", "proxy", func(s state) bool {
		// With maxUnavailable 0 no node is ever without a pod, and with
		// maxSurge 1 at most one node has two (checked at every poll: a
		// sample of the states the update goes through).
		doubled := 0
		for _, n := range []string{"n1", "n2", "n3"} {
			switch len(s.byNode[n]) {
			case 0:
				violations = append(violations, n+" had no pod: "+s.String())
			case 2:
				doubled++
			}
		}
		if doubled > 1 {
			violations = append(violations, "two nodes surged at once: "+s.String())
		}
		return s.images() == "n1=proxy:2,n2=proxy:2,n3=proxy:2"
	})
	for _, v := range violations {
		t.Error(v)
	}
}
