package volumezone

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A volume's zone label, whatever its value, gives either no topology
// (an empty zone in the list) or the zones it lists, each non-empty, and
// a node in one of them fits.
func FuzzTopologies(f *testing.F) {
	f.Add("a__b")
	f.Add("us-east-1a")
	f.Add("a____b")
	f.Fuzz(func(t *testing.T, value string) {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelTopologyZone: value}}}
		got := topologies(pv)
		if len(got) == 0 {
			return
		}
		if len(got) != 1 || got[0].key != corev1.LabelTopologyZone {
			t.Fatalf("%q: %v", value, got)
		}
		for z := range got[0].values {
			if z == "" || z != strings.TrimSpace(z) || !strings.Contains(value, z) {
				t.Errorf("%q gave the zone %q", value, z)
			}
		}
	})
}
