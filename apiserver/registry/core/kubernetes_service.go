package core

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// KubernetesServiceIP is the first address of the service range: where
// pods reach the API server (kubernetes.default.svc).
const KubernetesServiceIP = "10.96.0.1"

// reconcileEvery is how often kube-apiserver's bootstrap controller puts
// the Service and its Endpoints back (--endpoint-reconciler-type=lease
// aside, a fixed 10 s).
const reconcileEvery = 10 * time.Second

// KubernetesService keeps the default/kubernetes Service, its Endpoints
// and its EndpointSlice in place, as kube-apiserver's bootstrap controller
// (and its endpoints adapter) does: port 443 ("https") of 10.96.0.1 leads
// to this API server's secure port. The Service has no selector, so the
// endpoints and EndpointSlice controllers leave them to the API server.
type KubernetesService struct {
	Services, Endpoints, EndpointSlices *apiserver.Storage
	IP                                  netip.Addr // where clients reach this API server (--advertise-address)
	Port                                int32      // its secure port
	Clock                               clock.Clock
	Log                                 *slog.Logger
}

// Run reconciles at once, then every 10 s, until ctx ends.
func (k *KubernetesService) Run(ctx context.Context) {
	for {
		if err := k.Reconcile(ctx); err != nil && ctx.Err() == nil {
			k.Log.Warn("could not keep the kubernetes Service in place", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-k.Clock.After(reconcileEvery):
		}
	}
}

// Reconcile creates the Service and Endpoints if they are missing, and
// puts back what somebody changed.
func (k *KubernetesService) Reconcile(ctx context.Context) error {
	meta := metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
		Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}}
	ports := []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(k.Port)}}
	svc := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
		ClusterIP: KubernetesServiceIP, Ports: ports, SessionAffinity: corev1.ServiceAffinityNone}}
	if err := k.ensure(ctx, k.Services, svc, func(cur runtime.Object) bool {
		s := cur.(*corev1.Service)
		if equality.Semantic.DeepEqual(s.Spec.Ports, ports) {
			return false
		}
		s.Spec.Ports = ports
		return true
	}); err != nil {
		return err
	}
	subsets := []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: k.IP.String()}},
		Ports: []corev1.EndpointPort{{Name: "https", Port: k.Port, Protocol: corev1.ProtocolTCP}}}}
	// The API server writes the slice itself (below), so the Endpoints
	// says it is not to be mirrored, as kube-apiserver's EndpointsAdapter.
	epMeta := *meta.DeepCopy()
	epMeta.Labels[discoveryv1.LabelSkipMirror] = "true"
	if err := k.ensure(ctx, k.Endpoints, &corev1.Endpoints{ObjectMeta: epMeta, Subsets: subsets}, func(cur runtime.Object) bool {
		e := cur.(*corev1.Endpoints)
		if equality.Semantic.DeepEqual(e.Subsets, subsets) && e.Labels[discoveryv1.LabelSkipMirror] == "true" {
			return false
		}
		e.Subsets = subsets
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[discoveryv1.LabelSkipMirror] = "true"
		return true
	}); err != nil || k.EndpointSlices == nil {
		return err
	}
	// The slice says what the Endpoints say, named and labelled after the
	// Service, as kube-apiserver's EndpointsAdapter writes it.
	sliceMeta := metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
		Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}}
	endpoints := []discoveryv1.Endpoint{{Addresses: []string{k.IP.String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}
	slicePorts := []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(k.Port), Protocol: ptr.To(corev1.ProtocolTCP)}}
	addressType := discoveryv1.AddressTypeIPv4
	if k.IP.Is6() {
		addressType = discoveryv1.AddressTypeIPv6
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: sliceMeta, AddressType: addressType, Endpoints: endpoints, Ports: slicePorts}
	return k.ensure(ctx, k.EndpointSlices, slice, func(cur runtime.Object) bool {
		e := cur.(*discoveryv1.EndpointSlice)
		if equality.Semantic.DeepEqual(e.Endpoints, endpoints) && equality.Semantic.DeepEqual(e.Ports, slicePorts) &&
			e.Labels[discoveryv1.LabelServiceName] == "kubernetes" {
			return false
		}
		e.Endpoints, e.Ports = endpoints, slicePorts
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[discoveryv1.LabelServiceName] = "kubernetes"
		return true
	})
}

// ensure lets fix repair the stored object (fix reports whether it
// changed anything), or creates want if there is none.
func (k *KubernetesService) ensure(ctx context.Context, st *apiserver.Storage, want runtime.Object, fix func(cur runtime.Object) bool) error {
	m := want.(metav1.Object)
	changed := false
	_, err := st.Update(ctx, m.GetNamespace(), m.GetName(), func(cur runtime.Object) (runtime.Object, error) {
		changed = fix(cur)
		return cur, nil
	})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := st.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		k.Log.Info("created the kubernetes service's "+st.Resource().Kind, "object", "default/kubernetes")
		return nil
	case err == nil && changed:
		k.Log.Info("put the kubernetes service's "+st.Resource().Kind+" back", "object", "default/kubernetes")
	}
	return err
}
