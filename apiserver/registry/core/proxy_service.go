package core

import (
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/util/proxy"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/store"
)

var serviceProxySubresource = apiserver.Subresource{Name: "proxy", Kind: "ServiceProxyOptions", Verbs: proxyVerbs, AnyMethod: true, Serve: serveServiceProxy}

// serveServiceProxy forwards to one ready endpoint of the Service, picked
// at random (Kubernetes' proxy.RandomEndpoint), as Kubernetes' service
// ResourceLocation: the Service's port is the one the name gives, by
// name or number (web:http, web:8080), else its unnamed one; the
// endpoint's port of that name is where the pod listens (the
// targetPort). Only endpoints that are pods are proxied to.
//
//	no port of that number   503 no service port 8080 found for service "web"
//	no ready endpoint        503 no endpoints available for service "web"
//	                         (also for web alone when its port is named)
func serveServiceProxy(q *apiserver.Request) {
	scheme, name, port, ok := splitProxyName(q)
	if !ok {
		return
	}
	ctx, ns := q.Context(), q.Info.Namespace
	obj, err := q.Storage.Get(ctx, ns, name)
	if err != nil {
		q.Fail(err)
		return
	}
	svc := obj.(*corev1.Service)
	if n, err := strconv.Atoi(port); err == nil {
		port = ""
		found := false
		for _, p := range svc.Spec.Ports {
			if int(p.Port) == n {
				port, found = p.Name, true
				break
			}
		}
		if !found {
			q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, name)))
			return
		}
	}
	objs, _, err := q.StorageFor(discoveryv1.SchemeGroupVersion.WithResource("endpointslices")).List(ctx, ns, store.ListOptions{})
	if err != nil {
		q.Fail(err)
		return
	}
	var slices []*discoveryv1.EndpointSlice
	for _, obj := range objs {
		if s := obj.(*discoveryv1.EndpointSlice); s.Labels[discoveryv1.LabelServiceName] == name {
			slices = append(slices, s)
		}
	}
	pods := q.StorageFor(corev1.SchemeGroupVersion.WithResource("pods"))
	var node *corev1.Node
	hostPort, err := proxy.RandomEndpoint(name, slices, port, corev1.IPv4Protocol, func(ep *discoveryv1.Endpoint) bool {
		// Only pods are proxied to, and only on a node that has a kubelet.
		if ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" || ep.TargetRef.Namespace != ns {
			return false
		}
		pod, err := pods.Get(ctx, ns, ep.TargetRef.Name)
		if err != nil {
			return false
		}
		node, err = podNode(q, pod.(*corev1.Pod))
		return err == nil
	})
	if err != nil {
		q.Fail(err) // Kubernetes' 503: no endpoints available for service "web"
		return
	}
	ip, epPort, _ := net.SplitHostPort(hostPort)
	if path, redirected := proxyPath(q); !redirected {
		forwardToPod(q, node, scheme, ip, epPort, path)
	}
}
