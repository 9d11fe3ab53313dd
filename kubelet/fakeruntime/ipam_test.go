package fakeruntime

import (
	"net/netip"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestIPAM(t *testing.T) {
	type step struct {
		op   string // allocate, reserve or release
		uid  types.UID
		ip   string // reserve: the address; allocate: the one expected
		fail bool
	}
	tests := []struct {
		name  string
		cidr  string
		steps []step
	}{
		{"pods get addresses from .2 upwards: .0 is the network and .1 the gateway", "10.244.1.0/24", []step{
			{op: "allocate", uid: "a", ip: "10.244.1.2"},
			{op: "allocate", uid: "b", ip: "10.244.1.3"},
		}},
		{"asking twice for the same pod returns the same address", "10.244.1.0/24", []step{
			{op: "allocate", uid: "a", ip: "10.244.1.2"},
			{op: "allocate", uid: "a", ip: "10.244.1.2"},
		}},
		{"a released address is not handed out again until the range wraps around", "10.244.1.0/29", []step{
			{op: "allocate", uid: "a", ip: "10.244.1.2"},
			{op: "release", uid: "a"},
			{op: "allocate", uid: "b", ip: "10.244.1.3"},
			{op: "allocate", uid: "c", ip: "10.244.1.4"},
			{op: "allocate", uid: "d", ip: "10.244.1.5"},
			{op: "allocate", uid: "e", ip: "10.244.1.6"},
			{op: "allocate", uid: "f", ip: "10.244.1.2"},
		}},
		{"a full range fails, and the broadcast address is never used", "10.244.1.0/30", []step{
			{op: "allocate", uid: "a", ip: "10.244.1.2"},
			{op: "allocate", uid: "b", fail: true},
		}},
		{"a restarted kubelet can reserve the address a pod had", "10.244.1.0/24", []step{
			{op: "reserve", uid: "a", ip: "10.244.1.7"},
			{op: "allocate", uid: "a", ip: "10.244.1.7"},
			{op: "allocate", uid: "b", ip: "10.244.1.2"},
		}},
		{"an address another pod holds cannot be reserved", "10.244.1.0/24", []step{
			{op: "allocate", uid: "a", ip: "10.244.1.2"},
			{op: "reserve", uid: "b", ip: "10.244.1.2", fail: true},
		}},
		{"an address outside the range cannot be reserved", "10.244.1.0/24", []step{
			{op: "reserve", uid: "a", ip: "10.244.2.5", fail: true},
			{op: "reserve", uid: "a", ip: "10.244.1.1", fail: true},
		}},
		{"allocation skips reserved addresses", "10.244.1.0/24", []step{
			{op: "reserve", uid: "a", ip: "10.244.1.2"},
			{op: "allocate", uid: "b", ip: "10.244.1.3"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newIPAM(netip.MustParsePrefix(tt.cidr))
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				switch s.op {
				case "allocate":
					ip, err := a.allocate(s.uid)
					if (err != nil) != s.fail {
						t.Fatalf("step %d: allocate(%s) error = %v, want failure %v", i, s.uid, err, s.fail)
					}
					if !s.fail && ip.String() != s.ip {
						t.Fatalf("step %d: allocate(%s) = %s, want %s", i, s.uid, ip, s.ip)
					}
				case "reserve":
					err := a.reserve(s.uid, netip.MustParseAddr(s.ip))
					if (err != nil) != s.fail {
						t.Fatalf("step %d: reserve(%s, %s) error = %v, want failure %v", i, s.uid, s.ip, err, s.fail)
					}
				case "release":
					a.release(s.uid)
				}
			}
		})
	}
}

func TestIPAMRejectsRangesWithoutRoomForPods(t *testing.T) {
	for _, cidr := range []string{"10.244.1.0/31", "fd00::/64"} {
		if _, err := newIPAM(netip.MustParsePrefix(cidr)); err == nil {
			t.Errorf("newIPAM(%s) succeeded, want an error", cidr)
		}
	}
}
