package statefulset

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// testSet is web: n replicas of nginx:1.25 behind the Service nginx, as
// the API server stores it (defaulted: OrderedReady, RollingUpdate with
// partition 0 and maxUnavailable 1, Retain/Retain).
func testSet(n int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "set-uid", Generation: 1},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(n),
			ServiceName:         "nginx",
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25"}}},
			},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0), MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
			PersistentVolumeClaimRetentionPolicy: &retention{WhenDeleted: retain, WhenScaled: retain},
			RevisionHistoryLimit:                 ptr.To[int32](10),
		},
	}
}

// withClaims adds the claim template www to the set.
func withClaims(s *appsv1.StatefulSet) *appsv1.StatefulSet {
	s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
	s.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}}
	return s
}

// Pod states, as the kubelet reports them.
const (
	ready       = "ready"
	pending     = "pending"
	notReady    = "running, not ready"
	failed      = "failed"
	terminating = "terminating"
)

// podOf is the set's pod of ordinal at revision rev, in state.
func podOf(set *appsv1.StatefulSet, ordinal int, rev, state string) *corev1.Pod {
	pod := newPod(set, ordinal)
	pod.UID = types.UID(fmt.Sprintf("pod-uid-%d", ordinal))
	setRevision(pod, rev)
	switch state {
	case pending:
		pod.Status.Phase = corev1.PodPending
	case failed:
		pod.Status.Phase = corev1.PodFailed
	case notReady:
		pod.Status.Phase = corev1.PodRunning
	case ready, terminating:
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}
		if state == terminating {
			pod.DeletionTimestamp = ptr.To(metav1.NewTime(now))
		}
	}
	return pod
}

// pods is the set's pods of the ordinals given, in state, at revision "A".
func pods(set *appsv1.StatefulSet, state string, ordinals ...int) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range ordinals {
		out = append(out, podOf(set, o, "A", state))
	}
	return out
}

// planFor plans a sync of set whose current revision is "A" and update
// revision update (the set itself at both: the tests read revision labels).
func planFor(set *appsv1.StatefulSet, update string, ps []*corev1.Pod, claims ...*corev1.PersistentVolumeClaim) *plan {
	byName := map[string]*corev1.PersistentVolumeClaim{}
	for _, c := range claims {
		byName[c.Name] = c
	}
	return planSync(planInput{set: set, currentSet: set, updateSet: set, currentRevision: "A", updateRevision: update,
		pods: ps, claim: func(name string) *corev1.PersistentVolumeClaim { return byName[name] }, now: now})
}

// writes lists the plan's ops, "create web-0", "delete web-2", ..., in
// the order they are made (a Parallel phase's writes go at once).
func writes(p *plan) string {
	verb := map[opKind]string{opCreate: "create", opDelete: "delete", opEnsureClaims: "claims", opUpdate: "update", opFixClaimRefs: "claim-refs"}
	var out []string
	for _, ph := range p.phases {
		for _, item := range ph.items {
			for _, o := range item {
				out = append(out, verb[o.kind]+" "+o.pod.Name)
			}
		}
	}
	return strings.Join(out, ", ")
}

func TestPlanOrdersPodsAsThePodManagementPolicySays(t *testing.T) {
	parallel := func(s *appsv1.StatefulSet) *appsv1.StatefulSet {
		s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		return s
	}
	tests := []struct {
		name    string
		set     *appsv1.StatefulSet
		pods    []*corev1.Pod
		want    string
		waiting string // part of why the plan stops, "" if it does not
	}{
		{"OrderedReady creates web-0 alone and waits for it", testSet(3), nil, "create web-0", "web-0 was just created"},
		{"OrderedReady waits while web-0 is Pending", testSet(3), pods(testSet(3), pending, 0), "", "web-0 is not Running and Ready"},
		{"OrderedReady waits while web-0 runs but is not Ready", testSet(3), pods(testSet(3), notReady, 0), "", "web-0 is not Running and Ready"},
		{"OrderedReady creates web-1 once web-0 is Ready", testSet(3), pods(testSet(3), ready, 0), "create web-1", "web-1 was just created"},
		{"a complete set makes no writes", testSet(3), pods(testSet(3), ready, 0, 1, 2), "", ""},
		{"Parallel creates every missing pod at once", parallel(testSet(3)), nil, "create web-0, create web-1, create web-2", ""},
		{"Parallel does not wait for a pending pod", parallel(testSet(3)), pods(testSet(3), pending, 0), "create web-1, create web-2", ""},
		{"a failed pod is deleted, to be recreated by the next sync", testSet(3), pods(testSet(3), failed, 0), "delete web-0", "web-0 is Failed"},
		{"OrderedReady does not create past a failed pod", testSet(3), append(pods(testSet(3), ready, 0), pods(testSet(3), failed, 1)...),
			"delete web-1", "web-1 is Failed"},
		{"Parallel replaces a failed pod and creates the missing ones", parallel(testSet(3)), append(pods(testSet(3), ready, 0), pods(testSet(3), failed, 1)...),
			"delete web-1, create web-2", ""},
		{"OrderedReady waits for a terminating pod before creating its successors", testSet(3), pods(testSet(3), terminating, 0), "", "web-0 is terminating"},
		{"scale-down deletes the highest ordinal first, one at a time", testSet(1), pods(testSet(1), ready, 0, 1, 2), "delete web-2", "web-2 is being deleted"},
		{"scale-down waits for the deleted pod to be gone", testSet(1), append(pods(testSet(1), ready, 0, 1), pods(testSet(1), terminating, 2)...),
			"", "web-2 is terminating"},
		{"scale-down waits while a pod it keeps is unhealthy", testSet(1), append(pods(testSet(1), notReady, 0), pods(testSet(1), ready, 1, 2)...),
			"", "web-0 is not Running and Ready"},
		{"scale-down may delete the unhealthy pod itself", testSet(1), append(pods(testSet(1), ready, 0, 1), pods(testSet(1), notReady, 2)...),
			"delete web-2", "web-2 is being deleted"},
		{"scale-down still deletes a healthy pod above an unhealthy condemned one", testSet(1), append(pods(testSet(1), ready, 0, 2), pods(testSet(1), notReady, 1)...),
			"delete web-2", "web-2 is being deleted"},
		{"but of two unhealthy condemned pods only the lowest may go first", testSet(1), append(pods(testSet(1), ready, 0), pods(testSet(1), notReady, 1, 2)...),
			"", "web-1 is not Running and Ready"},
		{"Parallel scale-down deletes every condemned pod at once", parallel(testSet(1)), pods(testSet(1), ready, 0, 1, 2), "delete web-2, delete web-1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(tc.set, "A", tc.pods)
			if got := writes(p); got != tc.want {
				t.Errorf("writes = %q, want %q", got, tc.want)
			}
			if (tc.waiting == "") != (p.waiting == "") || !strings.Contains(p.waiting, tc.waiting) {
				t.Errorf("waiting = %q, want it to say %q", p.waiting, tc.waiting)
			}
		})
	}
}

func TestPlanRollsUpdatesFromTheHighestOrdinalDownToThePartition(t *testing.T) {
	strategy := func(partition int32, maxUnavailable intstr.IntOrString, policy appsv1.PodManagementPolicyType) *appsv1.StatefulSet {
		s := testSet(3)
		s.Spec.PodManagementPolicy = policy
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &partition, MaxUnavailable: &maxUnavailable}
		return s
	}
	onDelete := testSet(3)
	onDelete.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	one, two, all := intstr.FromInt32(1), intstr.FromInt32(2), intstr.FromString("100%")
	ordered, parallel := appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement
	atB := func(s *appsv1.StatefulSet, state string, ord ...int) []*corev1.Pod {
		var out []*corev1.Pod
		for _, o := range ord {
			out = append(out, podOf(s, o, "B", state))
		}
		return out
	}
	tests := []struct {
		name string
		set  *appsv1.StatefulSet
		pods func(s *appsv1.StatefulSet) []*corev1.Pod
		want string
	}{
		{"the highest ordinal goes first", strategy(0, one, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, "delete web-2"},
		{"then the next, once the updated pod is ready", strategy(0, one, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return append(pods(s, ready, 0, 1), atB(s, ready, 2)...) }, "delete web-1"},
		{"nothing moves while the updated pod is not ready", strategy(0, one, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return append(pods(s, ready, 0, 1), atB(s, notReady, 2)...) }, ""},
		{"pods below the partition keep the current revision", strategy(2, one, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return append(pods(s, ready, 0, 1), atB(s, ready, 2)...) }, ""},
		{"a partition of 2 updates web-2 only", strategy(2, one, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, "delete web-2"},
		{"a partition above the replicas updates nothing: a canary of none", strategy(3, one, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, ""},
		{"maxUnavailable 2 deletes two pods at once", strategy(0, two, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, "delete web-2, delete web-1"},
		{"100% unavailable replaces every pod at once", strategy(0, all, ordered),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, "delete web-2, delete web-1, delete web-0"},
		{"Parallel replaces a broken old pod first, within the budget", strategy(0, one, parallel),
			func(s *appsv1.StatefulSet) []*corev1.Pod {
				return append(pods(s, notReady, 0), pods(s, ready, 1, 2)...)
			}, "delete web-0"},
		{"Parallel spends the budget from the top", strategy(0, two, parallel),
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, "delete web-2, delete web-1"},
		{"OnDelete never deletes a pod to update it", onDelete,
			func(s *appsv1.StatefulSet) []*corev1.Pod { return pods(s, ready, 0, 1, 2) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(tc.set, "B", tc.pods(tc.set))
			if got := writes(p); got != tc.want {
				t.Errorf("writes = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatusCountsThePodsOfEachRevision(t *testing.T) {
	set := testSet(3)
	ps := append(pods(set, ready, 0), podOf(set, 1, "B", notReady), podOf(set, 2, "B", ready))
	p := planFor(set, "B", ps)
	st := newStatus(set, p, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "A"}},
		&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "B"}}, 2, now)
	got := fmt.Sprintf("replicas %d ready %d available %d current %d updated %d collisions %d",
		st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas, *st.CollisionCount)
	if want := "replicas 3 ready 2 available 2 current 1 updated 2 collisions 2"; got != want {
		t.Errorf("status %s, want %s", got, want)
	}
	completeUpdate(set, &st)
	if st.CurrentRevision != "A" {
		t.Errorf("a rollout with a pod not ready completed: currentRevision %s", st.CurrentRevision)
	}
	ps[0], ps[1] = podOf(set, 0, "B", ready), podOf(set, 1, "B", ready)
	st = newStatus(set, planFor(set, "B", ps), &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "A"}},
		&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "B"}}, 0, now)
	completeUpdate(set, &st)
	if st.CurrentRevision != "B" || st.CurrentReplicas != 3 {
		t.Errorf("every pod updated and ready: currentRevision %s (%d pods), want B (3)", st.CurrentRevision, st.CurrentReplicas)
	}
}

func TestNewPodsAreMadeFromTheRevisionTheirOrdinalIsAt(t *testing.T) {
	set := testSet(3)
	set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2)
	current, update := set.DeepCopy(), set.DeepCopy()
	current.Spec.Template.Spec.Containers[0].Image = "nginx:1.24"
	in := planInput{set: set, currentSet: current, updateSet: update, currentRevision: "A", updateRevision: "B"}
	for _, tc := range []struct {
		ordinal    int
		rev, image string
	}{{1, "A", "nginx:1.24"}, {2, "B", "nginx:1.25"}} {
		pod := newVersionedPod(in, tc.ordinal)
		if revisionOf(pod) != tc.rev || pod.Spec.Containers[0].Image != tc.image {
			t.Errorf("web-%d: revision %s image %s, want %s %s (partition 2)", tc.ordinal, revisionOf(pod), pod.Spec.Containers[0].Image, tc.rev, tc.image)
		}
	}
}

func TestAStatefulPodHasTheIdentityOfItsOrdinal(t *testing.T) {
	set := withClaims(testSet(3))
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	pod := newPod(set, 6)
	checks := []struct {
		name      string
		got, want any
	}{
		{"name", pod.Name, "web-6"},
		{"hostname", pod.Spec.Hostname, "web-6"},
		{"subdomain: the governing Service", pod.Spec.Subdomain, "nginx"},
		{"pod-name label", pod.Labels[appsv1.StatefulSetPodNameLabel], "web-6"},
		{"pod-index label", pod.Labels[appsv1.PodIndexLabel], "6"},
		{"the template's labels", pod.Labels["app"], "nginx"},
		{"its claim", pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, "www-web-6"},
		{"controlled by the set", metav1.GetControllerOf(pod).UID, types.UID("set-uid")},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	claims := claimsFor(set, 6)
	if len(claims) != 1 || claims[0].Name != "www-web-6" || claims[0].Labels["app"] != "nginx" {
		t.Errorf("claims %v: want www-web-6 labelled with the selector", claims)
	}
	if !identityMatches(set, pod) || !storageMatches(set, pod) {
		t.Error("a new pod does not match its own identity or storage")
	}
	if p := planFor(set, "A", nil); writes(p) != "create web-5" {
		t.Errorf("with ordinals.start 5 the first pod is %q, want create web-5", writes(p))
	}
	relabelled := pod.DeepCopy()
	relabelled.Labels[appsv1.StatefulSetPodNameLabel] = "other"
	if identityMatches(set, relabelled) {
		t.Error("a pod whose pod-name label was changed still matches its identity")
	}
}

func TestPlanKeepsClaimsAsTheRetentionPolicySays(t *testing.T) {
	scaleDelete := withClaims(testSet(1))
	scaleDelete.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = remove
	claim := func(name string, owners ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", OwnerReferences: owners}}
	}
	oldPod := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "web-1", UID: "earlier-web-1", Controller: ptr.To(true)}
	ps := pods(scaleDelete, ready, 0, 1)
	grown := scaleDelete.DeepCopy()
	grown.Spec.Replicas = ptr.To[int32](2)

	tests := []struct {
		name   string
		set    *appsv1.StatefulSet
		pods   []*corev1.Pod
		claims []*corev1.PersistentVolumeClaim
		want   string
	}{
		{"a condemned pod's claim gets the pod as owner before the pod goes", scaleDelete, ps,
			[]*corev1.PersistentVolumeClaim{claim("www-web-0"), claim("www-web-1")}, "claim-refs web-1, delete web-1"},
		{"with Retain the claim keeps no owner", withClaims(testSet(1)), pods(withClaims(testSet(1)), ready, 0, 1),
			[]*corev1.PersistentVolumeClaim{claim("www-web-0"), claim("www-web-1")}, "delete web-1"},
		{"a new pod waits while its claim still belongs to the previous pod", grown, ps[:1],
			[]*corev1.PersistentVolumeClaim{claim("www-web-0"), claim("www-web-1", oldPod)}, ""},
		{"a pending pod gets its missing claim", withClaims(testSet(1)), pods(withClaims(testSet(1)), pending, 0), nil, "claims web-0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := writes(planFor(tc.set, "A", tc.pods, tc.claims...)); got != tc.want {
				t.Errorf("writes = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRetentionPolicyOwners(t *testing.T) {
	set := withClaims(testSet(2))
	inRange, condemned := podOf(set, 1, "A", ready), podOf(set, 2, "A", ready)
	tests := []struct {
		scaled, deleted appsv1.PersistentVolumeClaimRetentionPolicyType
		pod             *corev1.Pod
		want            string // the claim's owners' kinds after setClaimOwners
	}{
		{retain, retain, inRange, ""},
		{retain, remove, inRange, "StatefulSet"},
		{retain, remove, condemned, "StatefulSet"},
		{remove, retain, inRange, ""},
		{remove, retain, condemned, "Pod"},
		{remove, remove, inRange, "StatefulSet"},
		{remove, remove, condemned, "Pod"},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("whenScaled %s, whenDeleted %s, %s", tc.scaled, tc.deleted, tc.pod.Name)
		t.Run(name, func(t *testing.T) {
			s := set.DeepCopy()
			s.Spec.PersistentVolumeClaimRetentionPolicy = &retention{WhenScaled: tc.scaled, WhenDeleted: tc.deleted}
			claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "www-" + tc.pod.Name,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "unrelated", UID: "cm"}}}}
			setClaimOwners(claim, s, tc.pod)
			var kinds []string
			for _, r := range claim.OwnerReferences {
				if r.Kind != "ConfigMap" {
					kinds = append(kinds, r.Kind)
				}
			}
			if got := strings.Join(kinds, ","); got != tc.want {
				t.Errorf("owners %q, want %q", got, tc.want)
			}
			if len(claim.OwnerReferences) != len(kinds)+1 {
				t.Error("an unrelated owner reference was dropped")
			}
			if !claimOwnerUpToDate(claim, s, tc.pod) {
				t.Error("the claim is not up to date right after setClaimOwners")
			}
		})
	}
	// A claim another controller has is left alone.
	s := set.DeepCopy()
	s.Spec.PersistentVolumeClaimRetentionPolicy = &retention{WhenScaled: remove, WhenDeleted: remove}
	other := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "www-web-1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "x", UID: "rs", Controller: ptr.To(true)}}}}
	if !claimOwnerUpToDate(other, s, inRange) {
		t.Error("a claim controlled by another controller should be left as it is")
	}
}
