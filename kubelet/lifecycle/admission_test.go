package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/kubelet/internal/kubelettest"
	"github.com/mkube/mkube/scheduler/framework"
)

func requests(cpu, memory string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
}

func TestAdmissionRunsTheSchedulersGeneralFilters(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", Labels: map[string]string{"disktype": "ssd"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectPreferNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("2"),
			"example.com/gpu": resource.MustParse("1")}}}
	tainted := node.DeepCopy()
	tainted.Spec.Taints = append(tainted.Spec.Taints, corev1.Taint{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute})
	holding := kubelettest.AdmissionPod("holder", kubelettest.HostPort(21017, ""), requests("600m", "256Mi"))
	tests := []struct {
		name            string
		node            *corev1.Node
		running         []*corev1.Pod
		pod             *corev1.Pod
		reason, message string
	}{
		{"a pod that fits is admitted", node, []*corev1.Pod{holding}, kubelettest.AdmissionPod("p", kubelettest.HostPort(8080, ""), requests("400m", "512Mi")), "", ""},
		{"a host port another pod holds is refused", node, []*corev1.Pod{holding}, kubelettest.AdmissionPod("p", kubelettest.HostPort(21017, corev1.ProtocolTCP)),
			"NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		{"the same port over UDP is free", node, []*corev1.Pod{holding}, kubelettest.AdmissionPod("p", kubelettest.HostPort(21017, corev1.ProtocolUDP)), "", ""},
		{"cpu beyond what is free", node, []*corev1.Pod{holding}, kubelettest.AdmissionPod("p", requests("500m", "1Mi")),
			"OutOfcpu", "Node didn't have enough resource: cpu, requested: 500, used: 600, capacity: 1000"},
		{"memory beyond what is free", node, []*corev1.Pod{holding}, kubelettest.AdmissionPod("p", requests("1m", "800Mi")),
			"OutOfmemory", "Node didn't have enough resource: memory, requested: 838860800, used: 268435456, capacity: 1073741824"},
		{"more pods than the node takes", node, []*corev1.Pod{holding, kubelettest.AdmissionPod("second")}, kubelettest.AdmissionPod("p"),
			"OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"},
		{"resources come before ports", node, []*corev1.Pod{holding}, kubelettest.AdmissionPod("p", kubelettest.HostPort(21017, ""), requests("2", "1Mi")),
			"OutOfcpu", "Node didn't have enough resource: cpu, requested: 2000, used: 600, capacity: 1000"},
		{"an extended resource beyond what the node has", node, nil, kubelettest.AdmissionPod("p", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"example.com/gpu": resource.MustParse("2")}
		}), "OutOfexample.com/gpu", "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"},
		{"an extended resource the node does not offer is left out", node, nil, kubelettest.AdmissionPod("p", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"example.com/fpga": resource.MustParse("1")}
		}), "", ""},
		{"a nodeSelector the node's labels match", node, nil, kubelettest.AdmissionPod("p", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disktype": "ssd"} }), "", ""},
		{"a nodeSelector they do not", node, nil, kubelettest.AdmissionPod("p", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disktype": "hdd"} }),
			"NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		{"another node's pod", node, nil, kubelettest.AdmissionPod("p", func(p *corev1.Pod) { p.Spec.NodeName = "node02" }),
			"NodeName", "Predicate NodeName failed: node(s) didn't match the requested node name"},
		{"a PreferNoSchedule taint keeps nothing out", node, nil, kubelettest.AdmissionPod("p"), "", ""},
		{"an untolerated NoExecute taint does", tainted, nil, kubelettest.AdmissionPod("p"),
			"TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"},
		{"unless the pod tolerates it", tainted, nil, kubelettest.AdmissionPod("p", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
		}), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := framework.NewNodeInfo()
			info.SetNode(tc.node)
			for _, p := range tc.running {
				info.AddPodInfo(framework.NewPodInfo(p))
			}
			var reason, message string
			if r := generalFilter(tc.pod, info); r != nil {
				reason, message = r.Reason, r.Message
			}
			if reason != tc.reason || message != tc.message {
				t.Errorf("got %q %q\nwant %q %q", reason, message, tc.reason, tc.message)
			}
		})
	}
}

// The node informer may not yet have the label a pod was scheduled by
// (`kubectl label node`, then the bound pod, by two watches): before it
// refuses a pod for the node's labels or taints, admission asks the API
// server for the node as it is now. Other refusals do not ask.
func TestAdmissionRereadsTheNodeBeforeRefusingForItsLabels(t *testing.T) {
	stale := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", ResourceVersion: "10"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
	labelled := stale.DeepCopy()
	labelled.ResourceVersion, labelled.Labels = "11", map[string]string{"disktype": "ssd"}
	untainted := stale.DeepCopy()
	untainted.ResourceVersion = "11"
	tainted := stale.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}}
	ssd := kubelettest.AdmissionPod("p", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disktype": "ssd"} })
	tests := []struct {
		name         string
		cached, now  *corev1.Node
		pod          *corev1.Pod
		reason       string
		wantReadNode bool
	}{
		{"a label the informer has not seen yet", stale, labelled, ssd, "", true},
		{"a label the node still lacks", stale, stale, ssd, "NodeAffinity", true},
		{"a taint removed meanwhile", tainted, untainted, kubelettest.AdmissionPod("p"), "", true},
		{"a pod that fits asks nothing", labelled, labelled, ssd, "", false},
		{"another node's pod asks nothing", stale, stale, kubelettest.AdmissionPod("p", func(p *corev1.Pod) { p.Spec.NodeName = "node02" }), "NodeName", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := framework.NewNodeInfo()
			info.SetNode(tc.cached)
			read := false
			r, err := filterWithFreshNode(tc.pod, info, func() (*corev1.Node, error) { read = true; return tc.now, nil })
			if err != nil {
				t.Fatal(err)
			}
			reason := ""
			if r != nil {
				reason = r.Reason
			}
			if reason != tc.reason || read != tc.wantReadNode {
				t.Errorf("reason %q, read the node %v; want %q, %v", reason, read, tc.reason, tc.wantReadNode)
			}
		})
	}
}

// A resize beyond what the node has is Infeasible; beyond what its other
// pods leave, Deferred, in admission's words.
func TestResizeFits(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: kubelettest.ResourceList("cpu", "1", "memory", "1Gi", "pods", "10")}}
	other := kubelettest.AdmissionPod("other", requests("600m", "64Mi"))
	a := &Admitter{admitted: map[types.UID]*corev1.Pod{other.UID: other}}
	for _, tc := range []struct {
		cpu, reason, message string
	}{
		{"300m", "", ""},
		{"500m", corev1.PodReasonDeferred, "Node didn't have enough resource: cpu, requested: 500, used: 600, capacity: 1000"},
		{"2", corev1.PodReasonInfeasible, "Node didn't have enough capacity: cpu, requested: 2000, capacity: 1000"},
	} {
		reason, message := a.resizeFits(kubelettest.AdmissionPod("p", requests(tc.cpu, "64Mi")), node)
		if reason != tc.reason || message != tc.message {
			t.Errorf("cpu %s: %q %q, want %q %q", tc.cpu, reason, message, tc.reason, tc.message)
		}
	}
}
