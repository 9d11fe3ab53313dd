package admission

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/quota"
)

// quotaStore is the API server's storage of ResourceQuotas as the plugin
// sees it: List, and UpdateStatus with the resourceVersion check. A test
// can make the next update of a quota lose a race (the controller wrote
// first, adding raceUsed to its used).
type quotaStore struct {
	mu       sync.Mutex
	quotas   map[string]*corev1.ResourceQuota
	rev      int
	race     string              // the quota whose next update conflicts
	raceUsed corev1.ResourceList // what the winner of the race wrote
	writes   int
}

func newQuotaStore(quotas ...*corev1.ResourceQuota) *quotaStore {
	s := &quotaStore{quotas: map[string]*corev1.ResourceQuota{}}
	for _, q := range quotas {
		s.rev++
		q = q.DeepCopy()
		q.Namespace, q.ResourceVersion = "default", strconv.Itoa(s.rev)
		s.quotas[q.Name] = q
	}
	return s
}

func (s *quotaStore) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s *quotaStore) List(_ context.Context, gvr schema.GroupVersionResource, _ string) ([]runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runtime.Object
	if gvr == resourceQuotas {
		for _, q := range s.quotas {
			out = append(out, q.DeepCopy())
		}
	}
	return out, nil
}

func (s *quotaStore) UpdateStatus(_ context.Context, _ schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := obj.(*corev1.ResourceQuota)
	cur := s.quotas[q.Name]
	if s.race == q.Name {
		s.race = ""
		s.rev++
		cur.Status.Used = quota.Add(cur.Status.Used, s.raceUsed)
		cur.ResourceVersion = strconv.Itoa(s.rev)
	}
	if q.ResourceVersion != cur.ResourceVersion {
		return nil, apierrors.NewConflict(resourceQuotas.GroupResource(), q.Name, fmt.Errorf("the object has been modified"))
	}
	s.rev++
	s.writes++
	cur.Status = *q.Status.DeepCopy()
	cur.ResourceVersion = strconv.Itoa(s.rev)
	return cur.DeepCopy(), nil
}

func (s *quotaStore) used(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return quota.Format(s.quotas[name].Status.Used)
}

// quotaList builds a ResourceList from "name=quantity" pairs.
func quotaList(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pairs {
		name, q, _ := strings.Cut(p, "=")
		out[corev1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

// countedQuota is a quota the controller has counted: status.hard is
// spec.hard, status.used is used.
func countedQuota(name string, hard, used corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:   corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes},
		Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func quotaPod(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}}}}
}

func quotaCreate(gvr schema.GroupVersionResource, obj runtime.Object) *Attributes {
	return &Attributes{Operation: Create, Resource: gvr, Namespace: "default", Object: obj}
}

var (
	servicesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	replicaSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

func TestResourceQuotaAdmission(t *testing.T) {
	terminatingPod := quotaPod("job", quotaList("cpu=1"), nil)
	terminatingPod.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	running := quotaPod("web", quotaList("cpu=1"), nil)
	tests := []struct {
		name    string
		quotas  []*corev1.ResourceQuota
		write   *Attributes
		wantErr string            // the 403's message; "" to admit
		used    map[string]string // quota → status.used after the write
	}{
		{"a pod that fits is admitted and charged to the quota",
			[]*corev1.ResourceQuota{countedQuota("compute", quotaList("pods=2", "requests.cpu=1"), quotaList("pods=1", "requests.cpu=200m"))},
			quotaCreate(pods, quotaPod("web", quotaList("cpu=500m"), nil)), "",
			map[string]string{"compute": "pods=2,requests.cpu=700m"}},
		{"the pod over the pod count is refused with Kubernetes' message",
			[]*corev1.ResourceQuota{countedQuota("pods", quotaList("pods=1"), quotaList("pods=1"))},
			quotaCreate(pods, quotaPod("web", nil, nil)),
			`pods "web" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`,
			map[string]string{"pods": "pods=1"}},
		{"only the names that go over are in the message",
			[]*corev1.ResourceQuota{countedQuota("compute", quotaList("pods=5", "cpu=1", "memory=1Gi"), quotaList("pods=1", "cpu=500m", "memory=100Mi"))},
			quotaCreate(pods, quotaPod("fail-pod", quotaList("cpu=600m", "memory=100Mi"), nil)),
			`pods "fail-pod" is forbidden: exceeded quota: compute, requested: cpu=600m, used: cpu=500m, limited: cpu=1`, nil},
		{"an extended resource is limited as requests.<name>",
			[]*corev1.ResourceQuota{countedQuota("dongles", quotaList("requests.example.com/dongle=3"), quotaList("requests.example.com/dongle=2"))},
			quotaCreate(pods, quotaPod("web", quotaList("example.com/dongle=2"), quotaList("example.com/dongle=2"))),
			`pods "web" is forbidden: exceeded quota: dongles, requested: requests.example.com/dongle=2, used: requests.example.com/dongle=2, limited: requests.example.com/dongle=3`, nil},
		{"a quota on limits.cpu refuses a container that states none",
			[]*corev1.ResourceQuota{countedQuota("limits", quotaList("limits.cpu=2"), quotaList("limits.cpu=0"))},
			quotaCreate(pods, quotaPod("web", quotaList("cpu=1"), nil)),
			`pods "web" is forbidden: failed quota: limits: must specify limits.cpu for: web`, nil},
		{"a quota the controller has not counted yet refuses what it would count",
			[]*corev1.ResourceQuota{countedQuota("new", quotaList("pods=2", "cpu=1"), nil)},
			quotaCreate(pods, quotaPod("web", quotaList("cpu=1"), nil)),
			`pods "web" is forbidden: status unknown for quota: new, resources: cpu,pods`, nil},
		{"a generated name is named as it will be stored",
			[]*corev1.ResourceQuota{countedQuota("pods", quotaList("pods=0"), quotaList("pods=0"))},
			quotaCreate(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}),
			`pods "web-" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0`, nil},
		{"a pod outside the quota's scope is neither refused nor charged",
			[]*corev1.ResourceQuota{countedQuota("long", quotaList("pods=0"), quotaList("pods=0"), corev1.ResourceQuotaScopeNotTerminating),
				countedQuota("jobs", quotaList("pods=1"), quotaList("pods=0"), corev1.ResourceQuotaScopeTerminating)},
			quotaCreate(pods, terminatingPod), "", map[string]string{"long": "pods=0", "jobs": "pods=1"}},
		{"a pod moved into the Terminating scope is charged to its quotas as it enters them",
			[]*corev1.ResourceQuota{countedQuota("jobs", quotaList("pods=1"), quotaList("pods=1"), corev1.ResourceQuotaScopeTerminating)},
			&Attributes{Operation: Update, Resource: pods, Namespace: "default", Object: terminatingPod, OldObject: running},
			`pods "job" is forbidden: exceeded quota: jobs, requested: pods=1, used: pods=1, limited: pods=1`, nil},
		{"an update that leaves the scope alone is not charged again",
			[]*corev1.ResourceQuota{countedQuota("pods", quotaList("pods=1"), quotaList("pods=1"))},
			&Attributes{Operation: Update, Resource: pods, Namespace: "default", Object: running, OldObject: running}, "",
			map[string]string{"pods": "pods=1"}},
		{"a NodePort Service over the node ports is refused",
			[]*corev1.ResourceQuota{countedQuota("svc", quotaList("services=10", "services.nodeports=1"), quotaList("services=1", "services.nodeports=1"))},
			quotaCreate(servicesGVR, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}),
			`services "np" is forbidden: exceeded quota: svc, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1`, nil},
		{"a Service turned NodePort is charged its node ports",
			[]*corev1.ResourceQuota{countedQuota("svc", quotaList("services=10", "services.nodeports=2"), quotaList("services=1", "services.nodeports=0"))},
			&Attributes{Operation: Update, Resource: servicesGVR, Namespace: "default",
				Object:    &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}},
				OldObject: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}},
			"", map[string]string{"svc": "services=1,services.nodeports=1"}},
		{"a ConfigMap is counted under its legacy name and its count name",
			[]*corev1.ResourceQuota{countedQuota("objects", quotaList("configmaps=2", "count/configmaps=2"), quotaList("configmaps=1", "count/configmaps=1"))},
			quotaCreate(configMapsGVR, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}), "",
			map[string]string{"objects": "configmaps=2,count/configmaps=2"}},
		{"a ReplicaSet over count/replicasets.apps is refused",
			[]*corev1.ResourceQuota{countedQuota("objects", quotaList("count/replicasets.apps=1"), quotaList("count/replicasets.apps=1"))},
			quotaCreate(replicaSetsGVR, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"}}),
			`replicasets.apps "web" is forbidden: exceeded quota: objects, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1`, nil},
		{"a quota that counts other things does not concern the write",
			[]*corev1.ResourceQuota{countedQuota("pods", quotaList("pods=0"), quotaList("pods=0"))},
			quotaCreate(configMapsGVR, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}), "", map[string]string{"pods": "pods=0"}},
		{"events are never counted",
			[]*corev1.ResourceQuota{countedQuota("events", quotaList("count/events=0"), quotaList("count/events=0"))},
			quotaCreate(schema.GroupVersionResource{Version: "v1", Resource: "events"}, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newQuotaStore(tt.quotas...)
			err := admitResourceQuota(context.Background(), tt.write, store)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("admitted, want %q", tt.wantErr)
			case tt.wantErr != "":
				if !apierrors.IsForbidden(err) || err.Error() != tt.wantErr {
					t.Fatalf("got %v (403: %v),\nwant %s", err, apierrors.IsForbidden(err), tt.wantErr)
				}
			}
			for name, want := range tt.used {
				if got := store.used(name); got != want {
					t.Errorf("quota %s used = %s, want %s", name, got, want)
				}
			}
		})
	}
}

func TestAChargeThatLosesARaceIsRecomputedOnTheNewFigures(t *testing.T) {
	store := newQuotaStore(countedQuota("pods", quotaList("pods=2"), quotaList("pods=0")))
	// The controller (or another write) takes one pod between our read
	// and our write: the retry must see pods=1 and charge on top of it.
	store.race, store.raceUsed = "pods", quotaList("pods=1")
	if err := admitResourceQuota(context.Background(), quotaCreate(pods, quotaPod("a", nil, nil)), store); err != nil {
		t.Fatal(err)
	}
	if got := store.used("pods"); got != "pods=2" {
		t.Errorf("used = %s, want pods=2: the charge must go on top of the winner's", got)
	}
	store.race, store.raceUsed = "pods", quotaList("pods=0")
	err := admitResourceQuota(context.Background(), quotaCreate(pods, quotaPod("b", nil, nil)), store)
	if !apierrors.IsForbidden(err) {
		t.Errorf("a third pod against pods=2 was %v, want 403", err)
	}
}

func TestConcurrentCreatesCannotBothTakeTheLastPod(t *testing.T) {
	store := newQuotaStore(countedQuota("pods", quotaList("pods=5"), quotaList("pods=0")))
	const n = 20
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs <- admitResourceQuota(context.Background(), quotaCreate(pods, quotaPod(fmt.Sprint("p", i), nil, nil)), store)
		})
	}
	wg.Wait()
	close(errs)
	admitted := 0
	for err := range errs {
		switch {
		case err == nil:
			admitted++
		case !apierrors.IsForbidden(err):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if admitted != 5 || store.used("pods") != "pods=5" {
		t.Errorf("%d admitted, used %s; want exactly 5 and pods=5", admitted, store.used("pods"))
	}
}

func TestResourceQuotaNeedsAStatusWriter(t *testing.T) {
	objs := fakeObjects{resourceQuotas: {countedQuota("pods", quotaList("pods=1"), quotaList("pods=0"))}}
	err := admitResourceQuota(context.Background(), quotaCreate(pods, quotaPod("web", nil, nil)), objs)
	if !apierrors.IsInternalError(err) {
		t.Errorf("got %v, want a 500: a charge that cannot be recorded must not be admitted", err)
	}
}
