package core

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/store"
)

// MasterLeasesPrefix is where the API servers' leases are kept, one key
// per server named after its advertise address, as kube-apiserver keeps
// them: `etcdctl get --prefix /registry/masterleases/` lists the live API
// servers.
const MasterLeasesPrefix = store.Root + "masterleases/"

// MasterLeaseTTL is how long a lease lives after its last renewal:
// kube-apiserver's 15 s, one and a half reconciles (10 s), so a server
// that is only slow to renew keeps its place, and a dead one leaves
// within 15 s plus the reconcile that notices.
const MasterLeaseTTL = 15 * time.Second

// MasterLeases are the API servers' leases in etcd, kube-apiserver's
// storageLeases (pkg/controlplane/reconcilers/lease.go): each server
// renews its own key on every reconcile, and etcd deletes the key of a
// server that stopped renewing once its TTL runs out. The value is an
// Endpoints naming the server, as kube-apiserver writes it.
type MasterLeases struct {
	Store *store.Store
	TTL   time.Duration
}

// Renew writes ip's lease again, for another TTL.
func (l *MasterLeases) Renew(ctx context.Context, ip netip.Addr) error {
	value, err := json.Marshal(&corev1.Endpoints{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: ip.String()},
		Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip.String()}}}}})
	if err != nil {
		return err
	}
	_, err = l.Store.PutWithTTL(ctx, MasterLeasesPrefix+ip.String(), value, l.TTL)
	return err
}

// List is the addresses of the servers whose lease is live, sorted.
func (l *MasterLeases) List(ctx context.Context) ([]netip.Addr, error) {
	page, err := l.Store.List(ctx, MasterLeasesPrefix, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	for _, kv := range page.KVs {
		ip, err := netip.ParseAddr(strings.TrimPrefix(kv.Key, MasterLeasesPrefix))
		if err != nil {
			return nil, fmt.Errorf("master lease %s: %w", kv.Key, err)
		}
		ips = append(ips, ip)
	}
	slices.SortFunc(ips, netip.Addr.Compare)
	return ips, nil
}

// Remove gives ip's lease back before its TTL: a clean shutdown.
func (l *MasterLeases) Remove(ctx context.Context, ip netip.Addr) error {
	_, err := l.Store.Remove(ctx, MasterLeasesPrefix+ip.String())
	return err
}
