package cri

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestPodIPs(t *testing.T) {
	p, err := newPodIPs(netip.MustParsePrefix("10.88.0.0/29")) // usable: .2 to .6
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 5 {
		ip, err := p.allocate()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ip.String())
	}
	if want := "[10.88.0.2 10.88.0.3 10.88.0.4 10.88.0.5 10.88.0.6]"; fmt.Sprint(got) != want {
		t.Errorf("allocated %v, want %s: not the network, gateway or broadcast address", got, want)
	}
	if ip, err := p.allocate(); err == nil {
		t.Errorf("allocated %s from a full range, want an error", ip)
	}
	p.release(netip.MustParseAddr("10.88.0.4"))
	p.release(netip.MustParseAddr("10.88.0.3"))
	if ip, err := p.allocate(); err != nil || ip.String() != "10.88.0.3" {
		t.Errorf("after freeing .4 and .3, allocated %s (err %v), want .3: the search wraps around from the last address handed out", ip, err)
	}
}

func TestPodIPsRefusesRangesWithoutRoomForPods(t *testing.T) {
	for _, cidr := range []string{"10.88.0.0/31", "fd00::/64"} {
		if _, err := newPodIPs(netip.MustParsePrefix(cidr)); err == nil {
			t.Errorf("newPodIPs(%s) succeeded, want an error", cidr)
		}
	}
}
