package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
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
// the Service back and its endpoint reconciler renews its lease and
// rewrites the Endpoints: a fixed 10 s, two thirds of MasterLeaseTTL.
const reconcileEvery = 10 * time.Second

// removeTimeout bounds the goodbye of a server that stops: an etcd that
// lost its quorum must not hold the shutdown; the lease then lapses.
const removeTimeout = 2 * time.Second

// Leases are how the API servers learn which of them are alive:
// MasterLeases in etcd (kube-apiserver's --endpoint-reconciler-type=lease).
type Leases interface {
	// Renew keeps ip's lease alive for another TTL.
	Renew(ctx context.Context, ip netip.Addr) error
	// List is the addresses whose lease is live, sorted.
	List(ctx context.Context) ([]netip.Addr, error)
	// Remove gives ip's lease back at once.
	Remove(ctx context.Context, ip netip.Addr) error
}

// KubernetesService keeps the default/kubernetes Service, its Endpoints
// and its EndpointSlice in place, as kube-apiserver's bootstrap controller
// and its lease endpoint reconciler do: port 443 ("https") of 10.96.0.1
// leads to the secure port of every live API server.
//
// Every 10 s each API server renews its lease (MasterLeases), lists the
// live leases, and writes their addresses, sorted, as the Endpoints and
// the EndpointSlice, if they say something else. A server killed stops
// renewing, and the first reconcile after its lease lapses drops it; a
// server stopped cleanly removes its lease and itself at once
// (RemoveEndpoints). As kube-apiserver, it assumes every API server
// serves on the same secure port. The Service has no selector, so the
// endpoints and EndpointSlice controllers leave them to the API servers.
type KubernetesService struct {
	Services, Endpoints, EndpointSlices *apiserver.Storage
	// Leases are the API servers' leases; nil writes the Service only,
	// no Endpoints (--endpoint-reconciler-type=none).
	Leases Leases
	IP     netip.Addr // where clients reach this API server (--advertise-address)
	Port   int32      // its secure port
	Clock  clock.Clock
	Log    *slog.Logger
}

// Run reconciles at once, then every 10 s, until ctx ends; then it takes
// this server out of the endpoints (RemoveEndpoints) and returns. It
// blocks: the server waits for it before it closes etcd.
func (k *KubernetesService) Run(ctx context.Context) {
	for {
		if err := k.Reconcile(ctx); err != nil && ctx.Err() == nil {
			k.Log.Warn("could not keep the kubernetes Service in place", "err", err)
		}
		select {
		case <-ctx.Done():
			// ctx is over: the goodbye gets a context of its own.
			bye, cancel := context.WithTimeout(context.Background(), removeTimeout)
			defer cancel()
			if err := k.RemoveEndpoints(bye); err != nil {
				k.Log.Warn("could not take this API server out of the kubernetes endpoints: its lease lapses instead",
					"apiserver", k.IP.String(), "ttl", MasterLeaseTTL, "err", err)
			}
			return
		case <-k.Clock.After(reconcileEvery):
		}
	}
}

// Reconcile creates the Service if it is missing and puts back what
// somebody changed; then it renews this server's lease and writes the
// live servers' addresses into the Endpoints and EndpointSlice.
func (k *KubernetesService) Reconcile(ctx context.Context) error {
	if err := k.ensureService(ctx); err != nil || k.Leases == nil {
		return err
	}
	if err := k.Leases.Renew(ctx, k.IP); err != nil {
		return fmt.Errorf("renew the master lease: %w", err)
	}
	return k.writeEndpoints(ctx, func() ([]netip.Addr, error) {
		live, err := k.Leases.List(ctx)
		// The lease just renewed is live, whatever the list says
		// (kube-apiserver adds its own address too).
		if err == nil && !slices.Contains(live, k.IP) {
			live = append(live, k.IP)
			slices.SortFunc(live, netip.Addr.Compare)
		}
		return live, err
	})
}

// RemoveEndpoints takes this server out, as kube-apiserver does on
// shutdown: it removes its lease and writes the other live servers. The
// last server leaves its own address in, as kube-apiserver refuses to
// erase every endpoint: the next one to start replaces it.
func (k *KubernetesService) RemoveEndpoints(ctx context.Context) error {
	if k.Leases == nil {
		return nil
	}
	if err := k.Leases.Remove(ctx, k.IP); err != nil {
		return fmt.Errorf("remove the master lease: %w", err)
	}
	err := k.writeEndpoints(ctx, func() ([]netip.Addr, error) {
		live, err := k.Leases.List(ctx)
		live = slices.DeleteFunc(live, func(ip netip.Addr) bool { return ip == k.IP })
		if err == nil && len(live) == 0 {
			return nil, errLastServer
		}
		return live, err
	})
	if errors.Is(err, errLastServer) {
		k.Log.Info("the last API server leaves its address in the kubernetes endpoints", "apiserver", k.IP.String())
		return nil
	}
	return err
}

// errLastServer stops RemoveEndpoints from writing an empty list.
var errLastServer = errors.New("no other API server has a live lease")

// ensureService creates the Service, or puts its ports back.
func (k *KubernetesService) ensureService(ctx context.Context) error {
	ports := []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(k.Port)}}
	return k.ensure(ctx, k.Services, func() (runtime.Object, error) {
		return &corev1.Service{ObjectMeta: kubernetesMeta(), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
			ClusterIP: KubernetesServiceIP, Ports: ports, SessionAffinity: corev1.ServiceAffinityNone}}, nil
	}, func(cur runtime.Object) (bool, error) {
		s := cur.(*corev1.Service)
		if equality.Semantic.DeepEqual(s.Spec.Ports, ports) {
			return false, nil
		}
		s.Spec.Ports = ports
		return true, nil
	})
}

// kubernetesMeta is default/kubernetes with kube-apiserver's labels.
func kubernetesMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
		Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}}
}

// writeEndpoints makes the Endpoints, then the EndpointSlice, list the
// live servers (sorted), each on the secure port, and logs who joined and
// who left. The leases are listed after the object is read, for each
// write: a write that succeeds (nobody wrote in between) so lists every
// lease renewed before the last write, and two servers reconciling at
// once cannot leave one's older list behind.
func (k *KubernetesService) writeEndpoints(ctx context.Context, live func() ([]netip.Addr, error)) error {
	ports := []corev1.EndpointPort{{Name: "https", Port: k.Port, Protocol: corev1.ProtocolTCP}}
	subsets := func() ([]corev1.EndpointSubset, []string, error) {
		ips, err := live()
		if err != nil {
			return nil, nil, err
		}
		sub := corev1.EndpointSubset{Ports: ports}
		names := make([]string, len(ips))
		for i, ip := range ips {
			names[i] = ip.String()
			sub.Addresses = append(sub.Addresses, corev1.EndpointAddress{IP: names[i]})
		}
		return []corev1.EndpointSubset{sub}, names, nil
	}
	// The API server writes the slice itself (below), so the Endpoints
	// says it is not to be mirrored, as kube-apiserver's EndpointsAdapter.
	var before, after []string // the addresses the Endpoints had, and have
	if err := k.ensure(ctx, k.Endpoints, func() (runtime.Object, error) {
		subs, ips, err := subsets()
		before, after = nil, ips
		meta := kubernetesMeta()
		meta.Labels[discoveryv1.LabelSkipMirror] = "true"
		return &corev1.Endpoints{ObjectMeta: meta, Subsets: subs}, err
	}, func(cur runtime.Object) (bool, error) {
		e := cur.(*corev1.Endpoints)
		subs, ips, err := subsets()
		if err != nil {
			return false, err
		}
		before, after = nil, ips // fix runs again after a conflict
		for _, s := range e.Subsets {
			for _, a := range s.Addresses {
				before = append(before, a.IP)
			}
		}
		if equality.Semantic.DeepEqual(e.Subsets, subs) && e.Labels[discoveryv1.LabelSkipMirror] == "true" {
			return false, nil
		}
		e.Subsets = subs
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[discoveryv1.LabelSkipMirror] = "true"
		return true, nil
	}); err != nil {
		return err
	}
	k.logMembership(before, after)
	if k.EndpointSlices == nil {
		return nil
	}
	// The slice says what the Endpoints say, named and labelled after the
	// Service, as kube-apiserver's EndpointsAdapter writes it.
	slicePorts := []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(k.Port), Protocol: ptr.To(corev1.ProtocolTCP)}}
	endpoints := func() ([]discoveryv1.Endpoint, error) {
		ips, err := live()
		var eps []discoveryv1.Endpoint
		for _, ip := range ips {
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{ip.String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		return eps, err
	}
	addressType := discoveryv1.AddressTypeIPv4
	if k.IP.Is6() {
		addressType = discoveryv1.AddressTypeIPv6
	}
	return k.ensure(ctx, k.EndpointSlices, func() (runtime.Object, error) {
		eps, err := endpoints()
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
			AddressType: addressType, Endpoints: eps, Ports: slicePorts}, err
	}, func(cur runtime.Object) (bool, error) {
		e := cur.(*discoveryv1.EndpointSlice)
		eps, err := endpoints()
		if err != nil {
			return false, err
		}
		if equality.Semantic.DeepEqual(e.Endpoints, eps) && equality.Semantic.DeepEqual(e.Ports, slicePorts) &&
			e.Labels[discoveryv1.LabelServiceName] == "kubernetes" {
			return false, nil
		}
		e.Endpoints, e.Ports = eps, slicePorts
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[discoveryv1.LabelServiceName] = "kubernetes"
		return true, nil
	})
}

// logMembership says which API servers a write added to the endpoints
// and which it removed.
func (k *KubernetesService) logMembership(before, after []string) {
	for _, ip := range after {
		if !slices.Contains(before, ip) {
			k.Log.Info("added an API server to the kubernetes endpoints", "apiserver", ip, "live", after)
		}
	}
	for _, ip := range before {
		if !slices.Contains(after, ip) {
			k.Log.Info("removed an API server from the kubernetes endpoints", "apiserver", ip, "live", after)
		}
	}
}

// ensure lets fix repair default/kubernetes in st (fix reports whether it
// changed anything), or creates the object want makes if there is none.
// Another API server may create it first: then it is fixed after all.
func (k *KubernetesService) ensure(ctx context.Context, st *apiserver.Storage, want func() (runtime.Object, error),
	fix func(cur runtime.Object) (bool, error)) error {
	kind := st.Resource().Kind
	for lostTheCreate := false; ; lostTheCreate = true {
		changed := false
		_, err := st.Update(ctx, metav1.NamespaceDefault, "kubernetes", func(cur runtime.Object) (runtime.Object, error) {
			var err error
			changed, err = fix(cur)
			return cur, err
		})
		if err == nil && changed {
			k.Log.Info("updated the kubernetes service's "+kind, "object", "default/kubernetes")
		}
		if !apierrors.IsNotFound(err) || lostTheCreate {
			return err
		}
		obj, err := want()
		if err != nil {
			return err
		}
		if _, err := st.Create(ctx, obj); !apierrors.IsAlreadyExists(err) {
			if err == nil {
				k.Log.Info("created the kubernetes service's "+kind, "object", "default/kubernetes")
			}
			return err
		}
	}
}
