package core

import (
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/apiserver"
)

var podProxySubresource = apiserver.Subresource{Name: "proxy", Kind: "PodProxyOptions", Verbs: proxyVerbs, AnyMethod: true, Serve: servePodProxy}

// servePodProxy forwards to a port of the pod's IP, as Kubernetes' pod
// ResourceLocation picks it: the one its name gives (web:8080), else the
// first port its containers declare, else the scheme's (80). The pod's
// node carries the request (kubelet/podnetwork_route.go).
func servePodProxy(q *apiserver.Request) {
	scheme, name, port, ok := splitProxyName(q)
	if !ok {
		return
	}
	obj, err := q.Storage.Get(q.Context(), q.Info.Namespace, name)
	if err != nil {
		q.Fail(err)
		return
	}
	pod := obj.(*corev1.Pod)
	if port == "" {
		port = firstContainerPort(pod)
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		q.Fail(apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q: port %q", q.Info.Name, port)))
		return
	}
	if ip := net.ParseIP(pod.Status.PodIP); ip == nil || !ip.IsGlobalUnicast() {
		q.Fail(apierrors.NewBadRequest("address not allowed")) // no IP yet, or the node's loopback
		return
	}
	node, err := podNode(q, pod)
	if err != nil {
		q.Fail(err)
		return
	}
	if path, redirected := proxyPath(q); !redirected {
		forwardToPod(q, node, scheme, pod.Status.PodIP, port, path)
	}
}

// firstContainerPort is the first port the pod's containers declare, ""
// if none does.
func firstContainerPort(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if len(c.Ports) > 0 {
			return strconv.Itoa(int(c.Ports[0].ContainerPort))
		}
	}
	return ""
}
