package kubelet

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseLabels(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr bool
	}{
		{"an empty flag means no labels", "", map[string]string{}, false},
		{"labels are comma-separated key=value pairs", "disktype=ssd, zone=a", map[string]string{"disktype": "ssd", "zone": "a"}, false},
		{"a prefixed key and an empty value are valid", "example.com/gpu=", map[string]string{"example.com/gpu": ""}, false},
		{"a label without = is rejected", "disktype", nil, true},
		{"a key with a space is rejected", "disk type=ssd", nil, true},
		{"a value longer than 63 characters is rejected", "k=" + strings.Repeat("v", 64), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLabels(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseLabels(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLabels(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseTaints(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []corev1.Taint
		wantErr bool
	}{
		{"an empty flag means no taints", "", nil, false},
		{"key=value:Effect sets all three", "dedicated=gpu:NoSchedule",
			[]corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}, false},
		{"key:Effect has an empty value", "node-role.kubernetes.io/control-plane:NoSchedule",
			[]corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}, false},
		{"several taints are comma-separated", "a=1:PreferNoSchedule,b:NoExecute",
			[]corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectPreferNoSchedule}, {Key: "b", Effect: corev1.TaintEffectNoExecute}}, false},
		{"the same key may carry two effects", "a:NoSchedule,a:NoExecute",
			[]corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}}, false},
		{"the same key and effect twice is rejected", "a=1:NoSchedule,a=2:NoSchedule", nil, true},
		{"a taint without an effect is rejected", "dedicated=gpu", nil, true},
		{"an unknown effect is rejected", "dedicated=gpu:Sometimes", nil, true},
		{"effects are case-sensitive, as in Kubernetes", "dedicated=gpu:noschedule", nil, true},
		{"an empty key is rejected", "=gpu:NoSchedule", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTaints(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseTaints(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseTaints(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestCapacity(t *testing.T) {
	got, err := Capacity("4", "8Gi", 110)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[corev1.ResourceName]string{"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"} {
		if q := got[name]; q.String() != want {
			t.Errorf("capacity %s = %s, want %s", name, q.String(), want)
		}
	}
	for _, bad := range [][3]any{{"four", "8Gi", 110}, {"4", "lots", 110}, {"0", "8Gi", 110}, {"4", "8Gi", 0}} {
		if _, err := Capacity(bad[0].(string), bad[1].(string), bad[2].(int)); err == nil {
			t.Errorf("Capacity%v succeeded, want an error", bad)
		}
	}
}

func TestDefaultAddresses(t *testing.T) {
	tests := []struct {
		name, node, ip, cidr string
	}{
		{"node01 takes its number from its name", "node01", "10.240.1.1", "10.244.1.0/24"},
		{"node02 gets the next range", "node02", "10.240.2.1", "10.244.2.0/24"},
		{"a number above 255 wraps around", "node257", "10.240.1.1", "10.244.1.0/24"},
		{"node0 gets the first range", "node0", "10.240.0.1", "10.244.0.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultNodeIP(tt.node).String(); got != tt.ip {
				t.Errorf("DefaultNodeIP(%s) = %s, want %s", tt.node, got, tt.ip)
			}
			if got := DefaultPodCIDR(tt.node).String(); got != tt.cidr {
				t.Errorf("DefaultPodCIDR(%s) = %s, want %s", tt.node, got, tt.cidr)
			}
		})
	}
	t.Run("a name without a number gets a range from its hash, the same after every restart", func(t *testing.T) {
		// 87 is FNV-1a("worker") mod 256: a hash that does not change
		// between processes, unlike Go's map or maphash seeds.
		if ip, cidr := DefaultNodeIP("worker").String(), DefaultPodCIDR("worker").String(); ip != "10.240.87.1" || cidr != "10.244.87.0/24" {
			t.Errorf("worker got %s and %s, want 10.240.87.1 and 10.244.87.0/24", ip, cidr)
		}
	})
}
