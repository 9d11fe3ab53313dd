package endpointslice

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// FuzzReconcileKeepsEachPodOnceAndSettles drives one Service through
// changes of its pods, read from the input: each byte adds, changes or
// removes a pod. After each change, with the plan applied as the API
// server would, every pod with an IP is in exactly one slice, of the
// ports it resolves to, no slice is over the limit, the placeholder is
// there exactly when there are no pods, and a second sync writes nothing.
func FuzzReconcileKeepsEachPodOnceAndSettles(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 1 | 64, 2 | 128, 9})
	f.Add([]byte{1, 0, 0, 0})
	f.Add([]byte{2, 10, 20, 30, 10 | 64, 20 | 64, 30 | 64})
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) == 0 {
			return
		}
		maxPerSlice := int(input[0]%5) + 1
		svc := webService()
		live := map[int]*corev1.Pod{}
		var slices []*discoveryv1.EndpointSlice
		for _, b := range input[1:] {
			n := int(b % 32)
			switch {
			case b&192 == 192:
				delete(live, n)
			case b&64 != 0:
				live[n] = runningPod(n, notReady)
			case b&128 != 0:
				live[n] = runningPod(n, httpPort(9090))
			default:
				live[n] = runningPod(n)
			}
			var pods []*corev1.Pod
			for _, p := range live {
				pods = append(pods, p)
			}
			groups := desiredGroups(svc, pods, noZones)
			slices = applied(slices, reconcile(svc, groups, slices, maxPerSlice))
			if next := reconcile(svc, groups, slices, maxPerSlice); !next.empty() {
				t.Fatalf("a second sync still writes: %d creates, %d updates, %d deletes", len(next.create), len(next.update), len(next.remove))
			}
			seen := map[string]int{}
			for _, s := range slices {
				if len(s.Endpoints) > maxPerSlice {
					t.Fatalf("a slice of %d endpoints, over %d", len(s.Endpoints), maxPerSlice)
				}
				for _, ep := range s.Endpoints {
					pod := live[podNumber(ep)]
					if pod == nil {
						t.Fatalf("%s is gone but still listed", ep.TargetRef.Name)
					}
					if got, want := *s.Ports[0].Port, *endpointPorts(svc, pod)[0].Port; got != want {
						t.Fatalf("%s in a slice of port %d, resolves to %d", pod.Name, got, want)
					}
					seen[pod.Name]++
				}
			}
			for _, p := range live {
				if seen[p.Name] != 1 {
					t.Fatalf("%s is listed %d times", p.Name, seen[p.Name])
				}
			}
			if placeholder := len(slices) == 1 && len(slices[0].Endpoints) == 0; placeholder != (len(live) == 0) {
				t.Fatalf("%d pods, slices %q", len(live), describeAll(slices))
			}
		}
	})
}

// podNumber is n of the endpoint's pod, web-<n>.
func podNumber(ep discoveryv1.Endpoint) int {
	var n int
	fmt.Sscanf(ep.TargetRef.Name, "web-%d", &n)
	return n
}
