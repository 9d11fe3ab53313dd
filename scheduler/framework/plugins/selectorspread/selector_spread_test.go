package selectorspread

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// services is a framework.ServiceLister over a fixed list.
type services []*corev1.Service

func (s services) List(namespace string) []*corev1.Service {
	var out []*corev1.Service
	for _, svc := range s {
		if svc.Namespace == namespace {
			out = append(out, svc)
		}
	}
	return out
}

func service(name, namespace string, selector map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: corev1.ServiceSpec{Selector: selector}}
}

// score runs PreScore, Score and NormalizeScore over nodes.
func score(pod *corev1.Pod, svcs services, nodes []*framework.NodeInfo) (map[string]int64, bool) {
	pl, state, pi := New(framework.Handle{Services: svcs}), framework.NewCycleState(), framework.NewPodInfo(pod)
	if s := pl.PreScore(state, pi, nodes, nil); s.Code() == framework.Skip {
		return nil, true
	}
	scores := make([]framework.NodeScore, len(nodes))
	for i, n := range nodes {
		s, _ := pl.Score(state, pi, n)
		scores[i] = framework.NodeScore{Name: n.Node().Name, Score: s}
	}
	pl.NormalizeScore(state, pi, scores)
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.Score
	}
	return out, false
}

func TestSelectorSpreadScore(t *testing.T) {
	web := func(name, node string) *corev1.Pod {
		return st.MakePod(name).OwnedBy("ReplicaSet", "web-7d4b9").NodeName(node).Obj()
	}
	incoming := st.MakePod("web-new").OwnedBy("ReplicaSet", "web-7d4b9").Obj()
	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*framework.NodeInfo
		want  map[string]int64 // nil = skipped
	}{
		{"fewer replicas of the same ReplicaSet on a node score higher: 2 → 0, 0 → 100, 1 → 50",
			incoming, []*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Obj(), web("a", "node01"), web("b", "node01")),
				st.NodeInfo(st.MakeNode("node02").Obj()),
				st.NodeInfo(st.MakeNode("node03").Obj(), web("c", "node03")),
			}, map[string]int64{"node01": 0, "node02": 100, "node03": 50}},
		{"worked example: zones count 2/3, so the node in the zone with fewer replicas wins",
			incoming, []*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Zone("a").Obj(), web("a", "node01"), web("b", "node01")),
				st.NodeInfo(st.MakeNode("node02").Zone("a").Obj()),
				st.NodeInfo(st.MakeNode("node03").Zone("b").Obj(), web("c", "node03")),
			}, map[string]int64{"node01": 0, "node02": 33, "node03": 50}},
		{"pods of another ReplicaSet, of another namespace, or being deleted are not peers",
			incoming, []*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Obj(),
					st.MakePod("x").OwnedBy("ReplicaSet", "api-5c6f").NodeName("node01").Obj(),
					st.MakePod("y").Namespace("prod").OwnedBy("ReplicaSet", "web-7d4b9").NodeName("node01").Obj(),
					st.MakePod("z").OwnedBy("ReplicaSet", "web-7d4b9").Terminating().NodeName("node01").Obj()),
				st.NodeInfo(st.MakeNode("node02").Obj(), web("a", "node02")),
			}, map[string]int64{"node01": 100, "node02": 0}},
		{"a StatefulSet's pods are spread too",
			st.MakePod("db-2").OwnedBy("StatefulSet", "db").Obj(), []*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Obj(), st.MakePod("db-0").OwnedBy("StatefulSet", "db").NodeName("node01").Obj()),
				st.NodeInfo(st.MakeNode("node02").Obj()),
			}, map[string]int64{"node01": 0, "node02": 100}},
		{"with no replica placed yet every node scores 100",
			incoming, []*framework.NodeInfo{st.NodeInfo(st.MakeNode("node01").Zone("a").Obj()), st.NodeInfo(st.MakeNode("node02").Obj())},
			map[string]int64{"node01": 100, "node02": 100}},
		{"a pod without a controller is skipped", st.MakePod("bare").Obj(), []*framework.NodeInfo{st.NodeInfo(st.MakeNode("node01").Obj())}, nil},
		{"a pod of a Job is skipped: Jobs are not spread",
			st.MakePod("j").OwnedBy("Job", "backup").Obj(), []*framework.NodeInfo{st.NodeInfo(st.MakeNode("node01").Obj())}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := score(tt.pod, nil, tt.nodes)
			if skipped != (tt.want == nil) || !maps.Equal(got, tt.want) {
				t.Errorf("got %v (skipped %v), want %v", got, skipped, tt.want)
			}
		})
	}
}

func TestSelectorSpreadWithServices(t *testing.T) {
	api := func(name, node string) *corev1.Pod { return st.MakePod(name).Label("app", "api").NodeName(node).Obj() }
	tests := []struct {
		name  string
		pod   *corev1.Pod
		svcs  services
		nodes []*framework.NodeInfo
		want  map[string]int64 // nil = skipped
	}{
		{"bare pods selected by one Service are spread like replicas: 2 → 0, 0 → 100",
			st.MakePod("api-new").Label("app", "api").Obj(),
			services{service("api", "default", map[string]string{"app": "api"})},
			[]*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Obj(), api("a", "node01"), api("b", "node01")),
				st.NodeInfo(st.MakeNode("node02").Obj()),
			}, map[string]int64{"node01": 0, "node02": 100}},
		{"a Service of another namespace, one selecting other labels, or one without a selector does not count",
			st.MakePod("api-new").Label("app", "api").Obj(),
			services{
				service("api", "prod", map[string]string{"app": "api"}),
				service("web", "default", map[string]string{"app": "web"}),
				service("external", "default", nil),
			},
			[]*framework.NodeInfo{st.NodeInfo(st.MakeNode("node01").Obj(), api("a", "node01"))}, nil},
		{"with a ReplicaSet and a Service, a peer must be in both: a pod of the Service outside the ReplicaSet is not counted",
			st.MakePod("web-new").Label("app", "web").OwnedBy("ReplicaSet", "web-7d4b9").Obj(),
			services{service("web", "default", map[string]string{"app": "web"})},
			[]*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Obj(), st.MakePod("canary").Label("app", "web").NodeName("node01").Obj()),
				st.NodeInfo(st.MakeNode("node02").Obj(), st.MakePod("web-a").Label("app", "web").OwnedBy("ReplicaSet", "web-7d4b9").NodeName("node02").Obj()),
			}, map[string]int64{"node01": 100, "node02": 0}},
		{"with two Services selecting the pod, a peer must match both selectors",
			st.MakePod("api-new").Label("app", "api").Label("tier", "backend").Obj(),
			services{
				service("api", "default", map[string]string{"app": "api"}),
				service("backend", "default", map[string]string{"tier": "backend"}),
			},
			[]*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Obj(), api("only-api", "node01")),
				st.NodeInfo(st.MakeNode("node02").Obj(), st.MakePod("both").Label("app", "api").Label("tier", "backend").NodeName("node02").Obj()),
			}, map[string]int64{"node01": 100, "node02": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := score(tt.pod, tt.svcs, tt.nodes)
			if skipped != (tt.want == nil) || !maps.Equal(got, tt.want) {
				t.Errorf("got %v (skipped %v), want %v", got, skipped, tt.want)
			}
		})
	}
}
