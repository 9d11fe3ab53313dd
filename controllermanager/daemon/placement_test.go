package daemon

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testDS() *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent", UID: "ds-uid", Generation: 1},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}}},
			},
		},
	}
}

func testNode(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestPlacementDecidesWhereADaemonPodBelongs(t *testing.T) {
	disk := map[string]string{"disk": "ssd"}
	taint := func(key string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Value: "x", Effect: effect}
	}
	tests := []struct {
		name                      string
		tmpl                      func(*corev1.PodSpec)
		node                      *corev1.Node
		shouldRun, shouldContinue bool
	}{
		{"a plain node runs the daemon", nil, testNode("n1", nil), true, true},
		{"a node with the selected label runs it", func(s *corev1.PodSpec) { s.NodeSelector = disk }, testNode("n1", disk), true, true},
		{"a node without it does not, and its pod goes", func(s *corev1.PodSpec) { s.NodeSelector = disk }, testNode("n1", nil), false, false},
		{"required node affinity is honoured", func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"hdd"}}}}}}}}
		}, testNode("n1", disk), false, false},
		{"a template naming another node runs on that one only", func(s *corev1.PodSpec) { s.NodeName = "n2" }, testNode("n1", nil), false, false},
		{"a template naming this node runs here", func(s *corev1.PodSpec) { s.NodeName = "n1" }, testNode("n1", nil), true, true},
		{"an untolerated NoSchedule taint keeps new pods off but lets the running one stay", nil,
			testNode("n1", nil, taint("dedicated", corev1.TaintEffectNoSchedule)), false, true},
		{"an untolerated NoExecute taint evicts it", nil,
			testNode("n1", nil, taint("dedicated", corev1.TaintEffectNoExecute)), false, false},
		{"a PreferNoSchedule taint does not matter", nil,
			testNode("n1", nil, taint("dedicated", corev1.TaintEffectPreferNoSchedule)), true, true},
		{"a template toleration tolerates its taint", func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}, testNode("n1", nil, taint("dedicated", corev1.TaintEffectNoExecute)), true, true},
		{"a not-ready node keeps its daemon (default toleration)", nil,
			testNode("n1", nil, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}), true, true},
		{"an unreachable node too", nil,
			testNode("n1", nil, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}), true, true},
		{"a cordoned node gets its daemon (unschedulable is tolerated)", nil,
			testNode("n1", nil, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), true, true},
		{"a node under memory pressure too", nil,
			testNode("n1", nil, corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}), true, true},
		{"a node without network does not get a normal daemon", nil,
			testNode("n1", nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), false, true},
		{"but gets one on the host network (the network plugin itself)", func(s *corev1.PodSpec) { s.HostNetwork = true },
			testNode("n1", nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := testDS()
			if tc.tmpl != nil {
				tc.tmpl(&ds.Spec.Template.Spec)
			}
			run, cont := placementOf(ds).check(tc.node)
			if run != tc.shouldRun || cont != tc.shouldContinue {
				t.Errorf("shouldRun, shouldContinueRunning = %v, %v; want %v, %v", run, cont, tc.shouldRun, tc.shouldContinue)
			}
		})
	}
}

func TestDaemonTolerationsAddTheDefaultsWithoutTouchingTheTemplate(t *testing.T) {
	spec := &corev1.PodSpec{Tolerations: []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "logging", Effect: corev1.TaintEffectNoSchedule},
		// The same as a default but for tolerationSeconds: the default wins.
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
	}}
	got := daemonTolerations(spec)
	if len(spec.Tolerations) != 2 || spec.Tolerations[1].TolerationSeconds == nil {
		t.Fatalf("the template was modified: %+v", spec.Tolerations)
	}
	if len(got) != 1+len(defaultTolerations) {
		t.Fatalf("%d tolerations, want the template's own and the %d defaults: %+v", len(got), len(defaultTolerations), got)
	}
	if got[0].Key != "dedicated" || got[1].Key != corev1.TaintNodeNotReady || got[1].TolerationSeconds != nil {
		t.Errorf("got %+v: want the template's first, then not-ready without tolerationSeconds", got[:2])
	}
	spec.HostNetwork = true
	if got := daemonTolerations(spec); got[len(got)-1].Key != corev1.TaintNodeNetworkUnavailable {
		t.Errorf("a host-network daemon does not tolerate network-unavailable: %+v", got)
	}
}
