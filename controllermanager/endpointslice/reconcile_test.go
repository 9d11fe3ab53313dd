package endpointslice

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// converge runs reconcile from no slices until it plans nothing, as the
// controller's successive syncs would, and returns the slices.
func converge(t *testing.T, svc *corev1.Service, pods []*corev1.Pod, maxPerSlice int, slices []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	t.Helper()
	for range 3 {
		p := reconcile(svc, desiredGroups(svc, pods, noZones), slices, maxPerSlice)
		if p.empty() {
			return slices
		}
		slices = applied(slices, p)
	}
	t.Fatalf("reconcile does not settle: %v", describeAll(slices))
	return nil
}

func TestReconcileWritesOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name        string
		maxPerSlice int
		// fresh: the Service's first sync, no slices yet; else the
		// slices are those of before, settled.
		fresh                  bool
		before, after          []*corev1.Pod
		creates, updates, dels int
		want                   []string // the slices after, by describe
	}{
		{name: "a new Service's pods go in one slice", maxPerSlice: 100, fresh: true, after: pods(1, 2),
			creates: 1, want: []string{"8080: 10.244.1.3 10.244.1.4"}},
		{name: "a Service without pods has one placeholder slice", maxPerSlice: 100, fresh: true,
			creates: 1, want: []string{": "}},
		{name: "the placeholder stays as long as there are no pods", maxPerSlice: 100, before: nil, after: nil,
			want: []string{": "}},
		{name: "the first pod turns the placeholder into its slice, not a delete and a create", maxPerSlice: 100, after: pods(1, 1),
			updates: 1, want: []string{"8080: 10.244.1.3"}},
		{name: "nothing changed, nothing is written", maxPerSlice: 100, before: pods(1, 3), after: pods(1, 3),
			want: []string{"8080: 10.244.1.3 10.244.1.4 10.244.1.5"}},
		{name: "a pod turning unready rewrites its slice only", maxPerSlice: 2, before: pods(1, 4),
			after: append(pods(1, 3), runningPod(4, notReady)), updates: 1,
			want: []string{"8080: 10.244.1.3 10.244.1.4", "8080: 10.244.1.5 10.244.1.6(unready)"}},
		{name: "250 pods make slices of 100, 100 and 50", maxPerSlice: 100, fresh: true, after: pods(1, 250), creates: 3},
		{name: "a new pod goes to the fullest slice it fits in", maxPerSlice: 3, before: append(pods(1, 3), pods(5, 6)...),
			after: append(pods(1, 3), pods(5, 7)...), updates: 1,
			want: []string{"8080: 10.244.1.3 10.244.1.4 10.244.1.5", "8080: 10.244.1.7 10.244.1.8 10.244.1.9"}},
		{name: "pods whose named port resolves differently get a slice each", maxPerSlice: 100, fresh: true,
			after: []*corev1.Pod{runningPod(1), runningPod(2, httpPort(9090))}, creates: 2,
			want: []string{"8080: 10.244.1.3", "9090: 10.244.1.4"}},
		{name: "a slice whose pods are all gone is reused for the new ones", maxPerSlice: 2, before: pods(1, 2),
			after: pods(3, 3), updates: 1, want: []string{"8080: 10.244.1.5"}},
		{name: "when every pod is gone the last slice becomes the placeholder", maxPerSlice: 2, before: pods(1, 3),
			after: nil, updates: 1, dels: 1, want: []string{": "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := webService()
			var existing []*discoveryv1.EndpointSlice
			if !tc.fresh {
				existing = converge(t, svc, tc.before, tc.maxPerSlice, nil)
			}
			p := reconcile(svc, desiredGroups(svc, tc.after, noZones), existing, tc.maxPerSlice)
			if got := fmt.Sprint(len(p.create), len(p.update), len(p.remove)); got != fmt.Sprint(tc.creates, tc.updates, tc.dels) {
				t.Errorf("creates, updates, deletes = %s, want %d %d %d", got, tc.creates, tc.updates, tc.dels)
			}
			after := applied(existing, p)
			if next := reconcile(svc, desiredGroups(svc, tc.after, noZones), after, tc.maxPerSlice); !next.empty() {
				t.Errorf("a second sync still writes: %+v", next)
			}
			if tc.want != nil && fmt.Sprint(describeAll(after)) != fmt.Sprint(tc.want) {
				t.Errorf("slices %q, want %q", describeAll(after), tc.want)
			}
			total := 0
			for _, s := range after {
				if len(s.Endpoints) > tc.maxPerSlice {
					t.Errorf("a slice has %d endpoints, over %d", len(s.Endpoints), tc.maxPerSlice)
				}
				total += len(s.Endpoints)
			}
			if total != len(tc.after) {
				t.Errorf("%d endpoints in all, want one per pod, %d", total, len(tc.after))
			}
		})
	}
}

func TestReconcileDeletesSlicesThatAreNotTheServicesAndKeepsLabelsInStep(t *testing.T) {
	svc := webService()
	slices := converge(t, svc, pods(1, 2), 100, nil)
	orphan := slices[0].DeepCopy()
	orphan.Name, orphan.OwnerReferences = "web-old", []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: "old-uid"}}
	p := reconcile(svc, desiredGroups(svc, pods(1, 2), noZones), append(slices, orphan), 100)
	if len(p.create)+len(p.update) != 0 || len(p.remove) != 1 || p.remove[0].Name != "web-old" {
		t.Fatalf("a slice of an old Service of the same name goes, and only it: %+v", p)
	}

	svc.Labels = map[string]string{"tier": "back", discoveryv1.LabelManagedBy: "someone-else"}
	p = reconcile(svc, desiredGroups(svc, pods(1, 2), noZones), slices, 100)
	if len(p.update) != 1 {
		t.Fatalf("a Service's label change is one update of its slice: %+v", p)
	}
	want := map[string]string{"tier": "back", discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: ManagedBy}
	if fmt.Sprint(p.update[0].Labels) != fmt.Sprint(want) {
		t.Fatalf("labels %v, want %v (the Service's, less the reserved ones, which the controller sets)", p.update[0].Labels, want)
	}
	ref := p.update[0].OwnerReferences[0]
	if ref.Kind != "Service" || ref.UID != svc.UID || !*ref.Controller || !*ref.BlockOwnerDeletion {
		t.Fatalf("owner %+v", ref)
	}
}

func TestANewSliceIsNamedAfterItsServiceAndHeadlessOnesSaySo(t *testing.T) {
	svc := webService()
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	s := reconcile(svc, desiredGroups(svc, pods(1, 1), noZones), nil, 100).create[0]
	if s.GenerateName != "web-" || s.Name != "" || s.AddressType != discoveryv1.AddressTypeIPv4 {
		t.Fatalf("slice %s/%s, %s", s.GenerateName, s.Name, s.AddressType)
	}
	if v, ok := s.Labels[corev1.IsHeadlessService]; !ok || v != "" {
		t.Fatalf("a headless Service's slice lacks %s: %v", corev1.IsHeadlessService, s.Labels)
	}
}
