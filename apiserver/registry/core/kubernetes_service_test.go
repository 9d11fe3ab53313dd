package core_test

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/mkube/mkube/apiserver/app"
	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/internal/testserver"
)

func TestTheKubernetesServiceLeadsToTheSecurePortAndIsKeptInPlace(t *testing.T) {
	s := testserver.StartServerWithout(t, []string{app.KubernetesServiceHook}) // this test's KubernetesService instead
	k := &core.KubernetesService{Services: s.API.StorageFor(core.Services.GroupVersionResource()),
		Endpoints:      s.API.StorageFor(core.Endpoints.GroupVersionResource()),
		EndpointSlices: s.API.StorageFor(discoveryv1.SchemeGroupVersion.WithResource("endpointslices")),
		IP:             netip.MustParseAddr("192.168.1.10"), Port: 6443, Log: slog.New(slog.DiscardHandler)}
	check := func(when string) {
		t.Helper()
		if err := k.Reconcile(context.Background()); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		var svc corev1.Service
		s.Do("GET", "/api/v1/namespaces/default/services/kubernetes", "", "", &svc)
		if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 ||
			svc.Spec.Ports[0].Name != "https" || svc.Spec.Ports[0].TargetPort.IntValue() != 6443 || svc.Spec.Selector != nil {
			t.Fatalf("%s: service %+v", when, svc.Spec)
		}
		var ep corev1.Endpoints
		s.Do("GET", "/api/v1/namespaces/default/endpoints/kubernetes", "", "", &ep)
		if len(ep.Subsets) != 1 || ep.Subsets[0].Addresses[0].IP != "192.168.1.10" || ep.Subsets[0].Ports[0].Port != 6443 {
			t.Fatalf("%s: endpoints %+v", when, ep.Subsets)
		}
		var slices discoveryv1.EndpointSliceList // found as the conformance suite finds it
		s.Do("GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name%3Dkubernetes", "", "", &slices)
		if len(slices.Items) != 1 || slices.Items[0].AddressType != discoveryv1.AddressTypeIPv4 || len(slices.Items[0].Endpoints) != 1 ||
			slices.Items[0].Endpoints[0].Addresses[0] != "192.168.1.10" || *slices.Items[0].Ports[0].Port != 6443 || !*slices.Items[0].Endpoints[0].Conditions.Ready {
			t.Fatalf("%s: endpoint slices %+v", when, slices.Items)
		}
	}
	check("first start")
	s.Do("PATCH", "/api/v1/namespaces/default/services/kubernetes", "application/merge-patch+json", `{"spec":{"ports":[{"name":"https","port":8443}]}}`, nil)
	s.Do("DELETE", "/api/v1/namespaces/default/endpoints/kubernetes", "", "", nil)
	s.Do("DELETE", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes", "", "", nil)
	check("after a user changed the Service and deleted its Endpoints and EndpointSlice")
}
