package podnetwork

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestPodIPs(t *testing.T) {
	p, err := NewPodIPs(netip.MustParsePrefix("10.88.0.0/29")) // usable: .2 to .6
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 5 {
		ip, err := p.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ip.String())
	}
	if want := "[10.88.0.2 10.88.0.3 10.88.0.4 10.88.0.5 10.88.0.6]"; fmt.Sprint(got) != want {
		t.Errorf("allocated %v, want %s: not the network, gateway or broadcast address", got, want)
	}
	if ip, err := p.Allocate(); err == nil {
		t.Errorf("allocated %s from a full range, want an error", ip)
	}
	p.Release(netip.MustParseAddr("10.88.0.4"))
	p.Release(netip.MustParseAddr("10.88.0.3"))
	if ip, err := p.Allocate(); err != nil || ip.String() != "10.88.0.3" {
		t.Errorf("after freeing .4 and .3, allocated %s (err %v), want .3: the search wraps around from the last address handed out", ip, err)
	}
}

func TestPodIPsRefusesRangesWithoutRoomForPods(t *testing.T) {
	for _, cidr := range []string{"10.88.0.0/31", "fd00::/64"} {
		if _, err := NewPodIPs(netip.MustParsePrefix(cidr)); err == nil {
			t.Errorf("NewPodIPs(%s) succeeded, want an error", cidr)
		}
	}
}

// A restored sandbox keeps its IP if it is in the range and free, as
// cri's RestoreSandbox asks; else Reserve takes nothing.
func TestPodIPsReserveTakesAFreeAddressOfTheRange(t *testing.T) {
	p, err := NewPodIPs(netip.MustParsePrefix("10.88.0.0/29")) // usable: .2 to .6
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"10.88.0.4", true},
		{"10.88.0.4", false}, // taken now
		{"10.88.0.1", false}, // the gateway
		{"10.88.0.7", false}, // the broadcast address
		{"10.89.0.4", false}, // another range
	} {
		if got := p.Reserve(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Reserve(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
	if p.Reserve(netip.Addr{}) {
		t.Error("Reserve took the zero address")
	}
	for range 4 {
		if ip, err := p.Allocate(); err != nil || ip.String() == "10.88.0.4" {
			t.Errorf("Allocate = %s (err %v): want the other four addresses", ip, err)
		}
	}
}
