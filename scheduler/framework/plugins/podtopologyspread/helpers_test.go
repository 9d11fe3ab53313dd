package podtopologyspread

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// Fixed listers: Services, ReplicaSets and ReplicationControllers.
type (
	services   []*corev1.Service
	replicaSet map[string]*appsv1.ReplicaSet            // by namespace/name
	rcs        map[string]*corev1.ReplicationController // by namespace/name
)

func (s services) List(namespace string) []*corev1.Service {
	var out []*corev1.Service
	for _, svc := range s {
		if svc.Namespace == namespace {
			out = append(out, svc)
		}
	}
	return out
}

func (r replicaSet) Get(namespace, name string) (*appsv1.ReplicaSet, bool) {
	rs, ok := r[namespace+"/"+name]
	return rs, ok
}

func (r rcs) Get(namespace, name string) (*corev1.ReplicationController, bool) {
	rc, ok := r[namespace+"/"+name]
	return rc, ok
}

// testHandle knows ReplicaSet web (selector app=web), ReplicaSet my-app
// (app=my-app), ReplicationController legacy (app=legacy) and Service api
// (app=api), all in default.
var testHandle = framework.Handle{
	Services: services{{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "api"}}}},
	ReplicaSets: replicaSet{
		"default/web":    {Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		"default/my-app": {Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "my-app"}}}},
	},
	ReplicationControllers: rcs{"default/legacy": {Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "legacy"}}}},
}

// web is a pod app=web of ReplicaSet web, on node (unbound if "").
func web(name, node string) *st.PodWrapper {
	return st.MakePod(name).Label("app", "web").OwnedBy("ReplicaSet", "web").NodeName(node)
}

// spreadPod is pod with constraints.
func spreadPod(pod *st.PodWrapper, cs ...corev1.TopologySpreadConstraint) *corev1.Pod {
	p := pod.Obj()
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, cs...)
	return p
}

// hard and soft are DoNotSchedule and ScheduleAnyway constraints selecting app=web.
func hard(key string, maxSkew int32) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

func soft(key string, maxSkew int32) corev1.TopologySpreadConstraint {
	c := hard(key, maxSkew)
	c.WhenUnsatisfiable = corev1.ScheduleAnyway
	return c
}

// snapshot puts pods (each with spec.nodeName set) on their nodes.
func snapshot(nodes []*st.NodeWrapper, pods ...*corev1.Pod) *cache.Snapshot {
	var infos []*framework.NodeInfo
	for _, n := range nodes {
		var on []*corev1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == n.Name {
				on = append(on, p)
			}
		}
		infos = append(infos, st.NodeInfo(n.Obj(), on...))
	}
	return cache.NewSnapshot(infos...)
}

// filterAll runs PreFilter, then Filter on every node, and returns
// "node01: fits; node02: <reason>; ..." or "skip".
func filterAll(pod *corev1.Pod, snap *cache.Snapshot) string {
	pl, state, pi := New(testHandle), framework.NewCycleState(), framework.NewPodInfo(pod)
	s := pl.PreFilter(state, pi, snap)
	if s.Code() == framework.Skip {
		return "skip"
	}
	if !s.IsSuccess() {
		return "prefilter " + s.Code().String() + ": " + s.Message()
	}
	return filterNodes(pl, state, pi, snap.List())
}

func filterNodes(pl *PodTopologySpread, state *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo) string {
	var out []string
	for _, n := range nodes {
		verdict := "fits"
		if s := pl.Filter(state, pi, n); !s.IsSuccess() {
			verdict = s.Code().String() + " " + s.Message()
		}
		out = append(out, n.Node().Name+": "+verdict)
	}
	return strings.Join(out, "; ")
}

// scoreAll runs PreScore on the feasible nodes (every node of snap unless
// named), then Score and NormalizeScore, and returns "node01 50, node02
// 100" or "skip".
func scoreAll(pod *corev1.Pod, snap *cache.Snapshot, feasible ...string) string {
	pl, state, pi := New(testHandle), framework.NewCycleState(), framework.NewPodInfo(pod)
	nodes := snap.List()
	if len(feasible) > 0 {
		nodes = nil
		for _, name := range feasible {
			n, _ := snap.Get(name)
			nodes = append(nodes, n)
		}
	}
	if s := pl.PreScore(state, pi, nodes, snap); s.Code() == framework.Skip {
		return "skip"
	} else if !s.IsSuccess() {
		return "prescore: " + s.Message()
	}
	scores := make([]framework.NodeScore, len(nodes))
	for i, n := range nodes {
		s, st := pl.Score(state, pi, n)
		if !st.IsSuccess() {
			return "score: " + st.Message()
		}
		scores[i] = framework.NodeScore{Name: n.Node().Name, Score: s}
	}
	pl.NormalizeScore(state, pi, scores)
	var out []string
	for _, s := range scores {
		out = append(out, s.Name+" "+strconv.FormatInt(s.Score, 10))
	}
	return strings.Join(out, ", ")
}
