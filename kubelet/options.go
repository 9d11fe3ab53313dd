package kubelet

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The helpers in this file turn the kubelet's command-line values into API
// types. They live here rather than in main so that they can be tested.

// ParseLabels parses --labels: "k=v,k2=v2" (empty: none). Keys and values
// must be valid label keys and values.
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("label %q: want key=value", kv)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("label %q value %q: %s", k, v, strings.Join(errs, "; "))
		}
		out[k] = v
	}
	return out, nil
}

// ParseTaints parses --register-with-taints, in kubectl taint's format:
// "key=value:Effect" or "key:Effect", comma-separated (empty: none).
func ParseTaints(s string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, spec := range splitList(s) {
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("taint %q: want key=value:Effect or key:Effect", spec)
		}
		k, v, _ := strings.Cut(kv, "=")
		switch e := corev1.TaintEffect(effect); e {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("taint %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", spec, effect)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("taint key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("taint %q value %q: %s", k, v, strings.Join(errs, "; "))
		}
		for _, t := range out {
			if t.Key == k && t.Effect == corev1.TaintEffect(effect) {
				return nil, fmt.Errorf("taint %q: key %q and effect %s given twice", spec, k, effect)
			}
		}
		out = append(out, corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)})
	}
	return out, nil
}

// Capacity is what the node offers the scheduler: --cpu, --memory and
// --pods, plus a fixed ephemeral-storage.
func Capacity(cpu, memory string, pods int) (corev1.ResourceList, error) {
	c, err := resource.ParseQuantity(cpu)
	if err != nil {
		return nil, fmt.Errorf("cpu %q: %w", cpu, err)
	}
	m, err := resource.ParseQuantity(memory)
	if err != nil {
		return nil, fmt.Errorf("memory %q: %w", memory, err)
	}
	if c.Sign() <= 0 || m.Sign() <= 0 || pods <= 0 {
		return nil, fmt.Errorf("cpu, memory and pods must be positive")
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    c,
		corev1.ResourceMemory: m,
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
		// Nothing in mkube uses disk; a typical node's root disk keeps
		// `kubectl describe node` looking like a real one.
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}, nil
}

// A fake node needs addresses that are stable across restarts and differ
// between nodes, without asking anyone. Both come from the node's index:
// the number its name ends with ("node01" → 1), modulo 256, or a hash of
// the name if it ends with no digit. Two nodes whose indices clash need
// --node-ip and --pod-cidr.
//
//	node01: InternalIP 10.240.1.1, podCIDR 10.244.1.0/24
//	node02: InternalIP 10.240.2.1, podCIDR 10.244.2.0/24
//
// 10.244.0.0/16 is flannel's default cluster CIDR, the one kubeadm
// tutorials use; 10.240.0.0/16 is a private range that does not overlap it.

// DefaultNodeIP is the node's InternalIP when --node-ip is not given.
func DefaultNodeIP(nodeName string) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 240, nodeIndex(nodeName), 1})
}

// DefaultPodCIDR is the node's podCIDR when --pod-cidr is not given.
func DefaultPodCIDR(nodeName string) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, nodeIndex(nodeName), 0}), 24)
}

func nodeIndex(name string) byte {
	digits := len(name)
	for digits > 0 && name[digits-1] >= '0' && name[digits-1] <= '9' {
		digits--
	}
	if n, err := strconv.ParseUint(name[digits:], 10, 64); err == nil {
		return byte(n % 256)
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return byte(h.Sum32() % 256)
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
