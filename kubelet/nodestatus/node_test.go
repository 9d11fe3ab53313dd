package nodestatus

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// capacity is what package kubelet's Capacity makes of cpu, memory and
// pods: the node's resources and a typical root disk.
func capacity(cpu, memory string, pods int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(cpu),
		corev1.ResourceMemory:           resource.MustParse(memory),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}

func testConfig() Config {
	capacity := capacity("4", "8Gi", 110)
	return Config{
		NodeName: "node01", NodeIP: netip.MustParseAddr("10.240.1.1"), PodCIDR: netip.MustParsePrefix("10.244.1.0/24"),
		Capacity: capacity, Labels: map[string]string{"disktype": "ssd", corev1.LabelArchStable: "arm64"}, Port: 10250,
		Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
	}
}

func TestNewNode(t *testing.T) {
	cfg := testConfig()
	nginx := corev1.ContainerImage{Names: []string{"docker.io/library/nginx:1.25"}, SizeBytes: 187 << 20}
	node := newNode(cfg, runtimeInfo{Version: "mkube://v0.1.0", Images: []corev1.ContainerImage{nginx}}, t0)

	if node.Kind != "Node" || node.APIVersion != "v1" {
		t.Errorf("TypeMeta = %+v; events need apiVersion and kind", node.TypeMeta)
	}
	wantLabels := map[string]string{
		"kubernetes.io/hostname": "node01", "kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux",
		"beta.kubernetes.io/arch": "amd64", "disktype": "ssd",
		"kubernetes.io/arch": "arm64", // --labels wins over the default, as in a real kubelet
	}
	if !reflect.DeepEqual(node.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", node.Labels, wantLabels)
	}
	if node.Spec.PodCIDR != "10.244.1.0/24" || !reflect.DeepEqual(node.Spec.PodCIDRs, []string{"10.244.1.0/24"}) {
		t.Errorf("podCIDR = %q %v", node.Spec.PodCIDR, node.Spec.PodCIDRs)
	}
	if !reflect.DeepEqual(node.Spec.Taints, cfg.Taints) {
		t.Errorf("taints = %v, want %v", node.Spec.Taints, cfg.Taints)
	}
	st := node.Status
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		c, a := st.Capacity[name], st.Allocatable[name]
		if c.IsZero() || c.Cmp(a) != 0 {
			t.Errorf("%s: capacity %s, allocatable %s; want equal and non-zero", name, c.String(), a.String())
		}
	}
	wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.240.1.1"}, {Type: corev1.NodeHostName, Address: "node01"}}
	if !reflect.DeepEqual(st.Addresses, wantAddrs) {
		t.Errorf("addresses = %v", st.Addresses)
	}
	if st.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Errorf("kubelet port = %d", st.DaemonEndpoints.KubeletEndpoint.Port)
	}
	if st.NodeInfo.KubeletVersion != "v1.32.0-mkube" || st.NodeInfo.ContainerRuntimeVersion != "mkube://v0.1.0" ||
		st.NodeInfo.OperatingSystem != "linux" || st.NodeInfo.Architecture != "amd64" || st.NodeInfo.MachineID == "" {
		t.Errorf("nodeInfo = %+v", st.NodeInfo)
	}
	if len(st.Images) != 1 || st.Images[0].Names[0] != "docker.io/library/nginx:1.25" || st.Images[0].SizeBytes == 0 {
		t.Errorf("images = %v", st.Images)
	}
	ready := findNodeCondition(st.Conditions, corev1.NodeReady)
	if ready == nil || ready.Status != corev1.ConditionTrue || ready.Reason != "KubeletReady" || ready.Message != "kubelet is posting ready status" {
		t.Errorf("Ready condition = %+v", ready)
	}
	for _, typ := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := findNodeCondition(st.Conditions, typ); c == nil || c.Status != corev1.ConditionFalse {
			t.Errorf("%s condition = %+v, want False", typ, c)
		}
	}
}

func TestNodeConditions(t *testing.T) {
	before := metav1.NewTime(t0.Add(-time.Hour))
	now := t0
	tests := []struct {
		name           string
		old            []corev1.NodeCondition
		wantTransition metav1.Time
		wantExtra      bool
	}{
		{"a new node's Ready condition starts now", nil, metav1.NewTime(now), false},
		{"a heartbeat keeps the time Ready last changed",
			[]corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: before}}, before, false},
		{"a node the controller marked Unknown becomes Ready now",
			[]corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: before}}, metav1.NewTime(now), false},
		{"conditions the kubelet does not own are kept",
			[]corev1.NodeCondition{{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse}}, metav1.NewTime(now), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeConditions(tt.old, now, "", false)
			ready := findNodeCondition(got, corev1.NodeReady)
			if !ready.LastTransitionTime.Equal(&tt.wantTransition) || !ready.LastHeartbeatTime.Time.Equal(now) {
				t.Errorf("Ready transition %v heartbeat %v; want %v and %v", ready.LastTransitionTime, ready.LastHeartbeatTime, tt.wantTransition, now)
			}
			if extra := findNodeCondition(got, corev1.NodeNetworkUnavailable) != nil; extra != tt.wantExtra {
				t.Errorf("NetworkUnavailable kept = %v, want %v", extra, tt.wantExtra)
			}
		})
	}
}

func TestMergeNode(t *testing.T) {
	want := newNode(testConfig(), runtimeInfo{}, t0)
	tests := []struct {
		name   string
		edit   func(*corev1.Node)
		check  func(*corev1.Node) bool
		reason string
	}{
		{"a label a user added with kubectl survives a kubelet restart",
			func(n *corev1.Node) { n.Labels["team"] = "blue" },
			func(n *corev1.Node) bool { return n.Labels["team"] == "blue" && n.Labels["disktype"] == "ssd" }, "labels"},
		{"the kubelet's own labels are restored",
			func(n *corev1.Node) { n.Labels["disktype"] = "hdd" },
			func(n *corev1.Node) bool { return n.Labels["disktype"] == "ssd" }, "labels"},
		{"a taint a user added survives, and the registration taint is not doubled",
			func(n *corev1.Node) {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})
			},
			func(n *corev1.Node) bool { return len(n.Spec.Taints) == 2 }, "taints"},
		{"a registration taint a user removed comes back",
			func(n *corev1.Node) { n.Spec.Taints = nil },
			func(n *corev1.Node) bool { return len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Key == "dedicated" }, "taints"},
		{"an existing podCIDR is never changed",
			func(n *corev1.Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.9.0/24", []string{"10.244.9.0/24"} },
			func(n *corev1.Node) bool { return n.Spec.PodCIDR == "10.244.9.0/24" }, "podCIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := want.DeepCopy()
			tt.edit(existing)
			before := existing.DeepCopy()
			got := mergeNode(existing, want)
			if !tt.check(got) {
				t.Errorf("%s after merge: labels %v taints %v podCIDR %s", tt.reason, got.Labels, got.Spec.Taints, got.Spec.PodCIDR)
			}
			if !reflect.DeepEqual(existing, before) {
				t.Error("mergeNode modified the node it was given")
			}
		})
	}
}

func findNodeCondition(cs []corev1.NodeCondition, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// An extended resource patched into status.capacity by a user survives
// the kubelet's status updates, and is allocatable; the kubelet's own
// resources are set to what it has.
func TestNodeStatusKeepsExtendedResources(t *testing.T) {
	capacity := capacity("4", "8Gi", 110)
	old := corev1.NodeStatus{Capacity: corev1.ResourceList{
		"example.com/dongle": resource.MustParse("4"),
		corev1.ResourceCPU:   resource.MustParse("64"), // wrong: the kubelet's own
	}}
	st := nodeStatus(Config{NodeName: "node01", Capacity: capacity}, runtimeInfo{}, old, time.Now())
	for name, want := range map[corev1.ResourceName]string{"example.com/dongle": "4", corev1.ResourceCPU: "4", corev1.ResourcePods: "110"} {
		if q := st.Capacity[name]; q.String() != want {
			t.Errorf("capacity %s = %s, want %s", name, q.String(), want)
		}
		if q := st.Allocatable[name]; q.String() != want {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
		}
	}
}

func TestMemoryPressure(t *testing.T) {
	capacity := capacity("4", "1Gi", 110)
	for used, want := range map[int64]bool{0: false, 900 << 20: false, 950 << 20: true, 2 << 30: true} {
		if got := memoryPressure(capacity, used); got != want {
			t.Errorf("%d bytes of 1Gi used: pressure %v, want %v", used, got, want)
		}
	}
}
