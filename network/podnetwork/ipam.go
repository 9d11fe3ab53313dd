package podnetwork

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// PodIPs hands out sandbox IPs from the pod CIDR the way the host-local
// CNI plugin does behind containerd's bridge network: the network address,
// the first host address (the bridge's gateway) and the broadcast address
// are never given out, and each search starts after the address handed
// out last, so an address just freed is not reused at once while Services
// and clients may still point at it.
//
// Worked example for 10.88.0.0/16: sandboxes get 10.88.0.2, .3, ... up to
// 10.88.255.254, then the search wraps around to the lowest freed address.
type PodIPs struct {
	first, last netip.Addr // the usable range, inclusive
	next        netip.Addr // where the next search starts
	taken       map[netip.Addr]bool
}

// NewPodIPs is the pod IPs of cidr, none taken yet.
func NewPodIPs(cidr netip.Prefix) (*PodIPs, error) {
	if !cidr.Addr().Is4() || cidr.Bits() > 30 {
		return nil, fmt.Errorf("pod CIDR %s: need an IPv4 prefix of /30 or larger", cidr)
	}
	network := cidr.Masked().Addr()
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(network.AsSlice())|(1<<(32-cidr.Bits())-1))
	first := network.Next().Next()
	return &PodIPs{first: first, last: netip.AddrFrom4(b).Prev(), next: first, taken: map[netip.Addr]bool{}}, nil
}

// Allocate takes the next free address.
func (p *PodIPs) Allocate() (netip.Addr, error) {
	ip := p.next
	for {
		if !p.taken[ip] {
			p.taken[ip] = true
			p.next = p.after(ip)
			return ip, nil
		}
		if ip = p.after(ip); ip == p.next {
			return netip.Addr{}, fmt.Errorf("no free pod IP in %s-%s", p.first, p.last)
		}
	}
}

// Release frees ip; releasing the zero address or a free one does nothing.
func (p *PodIPs) Release(ip netip.Addr) { delete(p.taken, ip) }

// Reserve takes ip itself, as a restored sandbox keeps the IP it had: it
// reports false, taking nothing, if ip is not in the usable range or is
// taken.
func (p *PodIPs) Reserve(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Less(p.first) || p.last.Less(ip) || p.taken[ip] {
		return false
	}
	p.taken[ip] = true
	return true
}

// after is the address after ip, wrapping from last to first.
func (p *PodIPs) after(ip netip.Addr) netip.Addr {
	if ip == p.last {
		return p.first
	}
	return ip.Next()
}
