package fakeruntime

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
)

// ipam hands out pod IPs from the node's podCIDR as the host-local CNI
// plugin does. The network address, the first host address (the bridge's
// gateway, cni0 in flannel's setup) and the broadcast address are never
// given out. Allocation is round-robin: it continues after the address
// handed out last, so an address a deleted pod just released is not reused
// at once, while Services and clients may still point at it.
//
// Worked example for 10.244.1.0/24: pods get 10.244.1.2, .3, ... .254, then
// the search wraps around to the lowest address released meanwhile.
type ipam struct {
	first, last netip.Addr // the usable range, inclusive
	next        netip.Addr // where the next search starts
	byUID       map[types.UID]netip.Addr
	owner       map[netip.Addr]types.UID
}

func newIPAM(cidr netip.Prefix) (*ipam, error) {
	if !cidr.Addr().Is4() || cidr.Bits() > 30 {
		return nil, fmt.Errorf("pod CIDR %s: need an IPv4 prefix of /30 or larger", cidr)
	}
	network := cidr.Masked().Addr()
	n := binary.BigEndian.Uint32(network.AsSlice())
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n|(1<<(32-cidr.Bits())-1))
	broadcast := netip.AddrFrom4(b)
	first := network.Next().Next()
	return &ipam{first: first, last: broadcast.Prev(), next: first,
		byUID: map[types.UID]netip.Addr{}, owner: map[netip.Addr]types.UID{}}, nil
}

// allocate returns uid's address, giving it one if it has none.
func (a *ipam) allocate(uid types.UID) (netip.Addr, error) {
	if ip, ok := a.byUID[uid]; ok {
		return ip, nil
	}
	ip := a.next
	for range a.size() {
		if _, taken := a.owner[ip]; !taken {
			a.take(uid, ip)
			a.next = a.after(ip)
			return ip, nil
		}
		ip = a.after(ip)
	}
	return netip.Addr{}, fmt.Errorf("no free pod IP in %s-%s", a.first, a.last)
}

// reserve gives uid the address ip, which a pod had before the kubelet
// restarted. It fails if ip is outside the range or somebody else's.
func (a *ipam) reserve(uid types.UID, ip netip.Addr) error {
	if ip.Less(a.first) || a.last.Less(ip) {
		return fmt.Errorf("pod IP %s is outside %s-%s", ip, a.first, a.last)
	}
	if owner, taken := a.owner[ip]; taken && owner != uid {
		return fmt.Errorf("pod IP %s is taken by pod %s", ip, owner)
	}
	a.release(uid)
	a.take(uid, ip)
	return nil
}

// release frees uid's address, if it has one.
func (a *ipam) release(uid types.UID) {
	if ip, ok := a.byUID[uid]; ok {
		delete(a.owner, ip)
		delete(a.byUID, uid)
	}
}

func (a *ipam) take(uid types.UID, ip netip.Addr) {
	a.byUID[uid] = ip
	a.owner[ip] = uid
}

// after is the address after ip, wrapping from last to first.
func (a *ipam) after(ip netip.Addr) netip.Addr {
	if ip == a.last {
		return a.first
	}
	return ip.Next()
}

func (a *ipam) size() int {
	return int(binary.BigEndian.Uint32(a.last.AsSlice())-binary.BigEndian.Uint32(a.first.AsSlice())) + 1
}
