package endpointslice

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestAPodsEndpointConditionsAreKubernetes(t *testing.T) {
	tests := []struct {
		name                        string
		pod                         *corev1.Pod
		publishNotReady             bool
		ready, serving, terminating bool
	}{
		{"a Ready pod is ready and serving", runningPod(1), false, true, true, false},
		{"a pod whose readiness probe fails is neither", runningPod(1, notReady), false, false, false, false},
		{"a Ready pod being deleted serves but is not ready", runningPod(1, terminating), false, false, true, true},
		{"a terminating pod that stopped passing probes is only terminating", runningPod(1, terminating, notReady), false, false, false, true},
		{"publishNotReadyAddresses makes an unready pod ready", runningPod(1, notReady), true, true, false, false},
		{"even a terminating one", runningPod(1, notReady, terminating), true, true, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := webService()
			svc.Spec.PublishNotReadyAddresses = tc.publishNotReady
			ep := podToEndpoint(svc, tc.pod, discoveryv1.AddressTypeIPv4, "")
			c := ep.Conditions
			got := fmt.Sprint(*c.Ready, *c.Serving, *c.Terminating)
			if want := fmt.Sprint(tc.ready, tc.serving, tc.terminating); got != want {
				t.Errorf("ready serving terminating = %s, want %s", got, want)
			}
		})
	}
}

func TestAnEndpointNamesItsPodNodeAndZone(t *testing.T) {
	pod := runningPod(1)
	pod.Spec.Hostname, pod.Spec.Subdomain = "web-1", "web"
	ep := podToEndpoint(webService(), pod, discoveryv1.AddressTypeIPv4, "zone-a")
	if fmt.Sprint(ep.Addresses) != "[10.244.1.3]" || ptr.Deref(ep.NodeName, "") != "node01" || ptr.Deref(ep.Zone, "") != "zone-a" ||
		ptr.Deref(ep.Hostname, "") != "web-1" {
		t.Fatalf("endpoint %+v", ep)
	}
	if r := ep.TargetRef; r.Kind != "Pod" || r.Namespace != "default" || r.Name != "web-1" || r.UID != "pod-uid-1" {
		t.Fatalf("targetRef %+v", r)
	}
	if ep := podToEndpoint(webService(), runningPod(1), discoveryv1.AddressTypeIPv6, ""); len(ep.Addresses) != 0 {
		t.Fatalf("an IPv4 pod has IPv6 addresses %v", ep.Addresses)
	}
}

func TestTargetPortsAreResolvedAgainstEachPod(t *testing.T) {
	sidecar := runningPod(1)
	always := corev1.ContainerRestartPolicyAlways
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always,
		Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}}}
	tests := []struct {
		name  string
		ports []corev1.ServicePort
		pod   *corev1.Pod
		want  string
	}{
		{"a named port is the pod's container port of that name", nil, runningPod(1), "[http:8080/TCP]"},
		{"a number is taken as it is", []corev1.ServicePort{{Name: "x", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9376)}},
			runningPod(1), "[x:9376/TCP]"},
		{"a name the pod lacks drops the port", []corev1.ServicePort{{Name: "x", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("grpc")}},
			runningPod(1), "[]"},
		{"a name must match the protocol too", []corev1.ServicePort{{Name: "x", Port: 80, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("http")}},
			runningPod(1), "[]"},
		{"a sidecar's ports count", []corev1.ServicePort{{Name: "m", Port: 9090, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("metrics")}},
			sidecar, "[m:9090/TCP]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := webService()
			if tc.ports != nil {
				svc.Spec.Ports = tc.ports
			}
			var got []string
			for _, p := range endpointPorts(svc, tc.pod) {
				got = append(got, fmt.Sprintf("%s:%d/%s", *p.Name, *p.Port, *p.Protocol))
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}

func TestWhichPodsAreEndpointsAndHowTheyAreGrouped(t *testing.T) {
	succeeded := runningPod(3)
	succeeded.Status.Phase = corev1.PodSucceeded
	noIP := runningPod(4)
	noIP.Status.PodIP, noIP.Status.PodIPs = "", nil
	all := []*corev1.Pod{runningPod(2, httpPort(9090)), runningPod(1), succeeded, noIP, runningPod(5, terminating, notReady)}
	groups := desiredGroups(webService(), all, noZones)
	var got []string
	for _, g := range groups {
		s := newSlice(webService(), nil, g.addressType, g.ports)
		s.Endpoints = g.endpoints
		got = append(got, describe(s))
	}
	// Pods 1 and 5 resolve "http" to 8080, pod 2 to 9090: two groups.
	// A finished pod and one without an IP are no endpoints; a
	// terminating one is, not ready.
	want := []string{"8080: 10.244.1.3 10.244.1.7(unready)", "9090: 10.244.1.4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("groups %q, want %q", got, want)
	}
}
