package kubelet

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The downward API's values, which a container's env (package envvars)
// and a downwardAPI volume (volumesources.go) take from the pod.

// podField is a fieldRef's value (the downward API's
// podFieldSelectorRuntimeValue): one of the pod's own fields, or what
// the kubelet knows of it once its sandbox exists, its IP and its node's.
// A label or annotation the pod lacks is "".
//
//	metadata.labels['app'] of a pod labelled app=web = "web"
func podField(pod *corev1.Pod, path, hostIP, podIP string) (string, error) {
	if field, key, ok := subscripted(path); ok {
		switch field {
		case "metadata.labels":
			return pod.Labels[key], nil
		case "metadata.annotations":
			return pod.Annotations[key], nil
		}
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	// The plural fields list every IP family, comma-separated; a node
	// and a pod of mkube have one IPv4 address each.
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	}
	return "", fmt.Errorf("field label not supported: %s", path)
}

// subscripted splits "metadata.labels['app']" into its field and key.
func subscripted(path string) (field, key string, ok bool) {
	field, rest, ok := strings.Cut(path, "['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", "", false
	}
	return field, strings.TrimSuffix(rest, "']"), true
}

// resourceField is a resourceFieldRef's value (the downward API's
// ExtractContainerResourceValue): a request or limit of the container
// sel names (c itself by default), in units of sel's divisor (default 1),
// rounded up. A cpu, memory or ephemeral-storage limit the container does
// not set is the node's allocatable, the most it may use (the kubelet's
// defaultPodLimitsForDownwardAPI); a request it does not set is 0.
//
//	requests.cpu 250m, divisor 1m                   = 250
//	requests.cpu 250m, divisor 1                    = 1 (rounded up)
//	limits.memory unset on an 8Gi node, divisor 1Mi = 8192
func resourceField(pod *corev1.Pod, c corev1.Container, sel *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	if sel.ContainerName != "" && sel.ContainerName != c.Name {
		var ok bool
		if c, ok = containerNamed(pod, sel.ContainerName); !ok { // volumesources.go
			return "", fmt.Errorf("container %s not found", sel.ContainerName)
		}
	}
	kind, name, _ := strings.Cut(sel.Resource, ".")
	res := corev1.ResourceName(name)
	defaulted := res == corev1.ResourceCPU || res == corev1.ResourceMemory || res == corev1.ResourceEphemeralStorage
	if !defaulted && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
		return "", fmt.Errorf("unsupported container resource : %s", sel.Resource)
	}
	var q resource.Quantity
	switch kind {
	case "requests":
		q = c.Resources.Requests[res]
	case "limits":
		limit, set := c.Resources.Limits[res]
		if !set && defaulted {
			limit = allocatable[res]
		}
		q = limit
	default:
		return "", fmt.Errorf("unsupported container resource : %s", sel.Resource)
	}
	divisor := sel.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	// cpu in millicores, so that 250m divides by 1m; the others in units.
	n, d := q.Value(), divisor.Value()
	if res == corev1.ResourceCPU {
		n, d = q.MilliValue(), divisor.MilliValue()
	}
	if d <= 0 {
		return "", fmt.Errorf("invalid divisor %s for %s", divisor.String(), sel.Resource)
	}
	return strconv.FormatInt((n+d-1)/d, 10), nil
}
