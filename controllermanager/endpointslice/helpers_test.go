package endpointslice

import (
	"fmt"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// webService selects app=web, port 80 to the pods' port named "http".
func webService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "svc-uid", Labels: map[string]string{"tier": "front"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.96.0.10",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}},
	}
}

// podOption changes a test pod.
type podOption func(*corev1.Pod)

func notReady(p *corev1.Pod)    { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func terminating(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }
func httpPort(port int32) podOption {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = port }
}

// runningPod is web pod n, Ready on node01 at 10.244.1.<n>, serving
// "http" on 8080.
func runningPod(n int, opts ...podOption) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", n), Namespace: "default", UID: types.UID(fmt.Sprint("pod-uid-", n)),
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "c",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: podIP(n), PodIPs: []corev1.PodIP{{IP: podIP(n)}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func podIP(n int) string { return fmt.Sprintf("10.244.%d.%d", n/250+1, n%250+2) }

func pods(from, to int, opts ...podOption) []*corev1.Pod {
	var out []*corev1.Pod
	for n := from; n <= to; n++ {
		out = append(out, runningPod(n, opts...))
	}
	return out
}

func noZones(string) string { return "" }

// generated numbers the names applied generates, never twice.
var generated atomic.Int64

// applied plays the API server: the slices after p, with names
// generated as "web-gen<n>" for the created ones.
func applied(existing []*discoveryv1.EndpointSlice, p plan) []*discoveryv1.EndpointSlice {
	byName := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		byName[s.Name] = s
	}
	for _, s := range p.remove {
		delete(byName, s.Name)
	}
	for _, s := range p.update {
		byName[s.Name] = s
	}
	for _, s := range p.create {
		s = s.DeepCopy()
		s.Name = fmt.Sprintf("%sgen%09d", s.GenerateName, generated.Add(1))
		byName[s.Name] = s
	}
	var out []*discoveryv1.EndpointSlice
	for _, s := range byName {
		out = append(out, s)
	}
	return sortedByName(out)
}

// describe is a slice's content in one line: "8080: 10.244.1.2 10.244.1.3(unready)".
func describe(s *discoveryv1.EndpointSlice) string {
	var ports []string
	for _, p := range s.Ports {
		ports = append(ports, fmt.Sprint(ptr.Deref(p.Port, 0)))
	}
	var eps []string
	for _, ep := range s.Endpoints {
		e := strings.Join(ep.Addresses, ",")
		if !ptr.Deref(ep.Conditions.Ready, false) {
			e += "(unready)"
		}
		eps = append(eps, e)
	}
	return strings.Join(ports, ",") + ": " + strings.Join(eps, " ")
}

func describeAll(slices []*discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range slices {
		out = append(out, describe(s))
	}
	return out
}
