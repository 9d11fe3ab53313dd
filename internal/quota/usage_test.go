package quota

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// list builds a ResourceList from "name=quantity" pairs.
func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pairs {
		name, q, _ := strings.Cut(p, "=")
		out[corev1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "nginx", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func pod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{Containers: containers}}
}

func TestWhatAnObjectCosts(t *testing.T) {
	finished := pod(container("c", list("cpu=1"), nil))
	finished.Status.Phase = corev1.PodSucceeded
	pastGrace := pod(container("c", list("cpu=1"), nil))
	pastGrace.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
	pastGrace.DeletionGracePeriodSeconds = ptr.To[int64](30)
	inGrace := pastGrace.DeepCopy()
	inGrace.DeletionGracePeriodSeconds = ptr.To[int64](300)
	withInit := pod(container("a", list("cpu=250m", "memory=64Mi"), list("cpu=1")), container("b", list("cpu=250m"), nil))
	withInit.Spec.InitContainers = []corev1.Container{container("init", list("cpu=2"), nil)}

	tests := []struct {
		name string
		e    Evaluator
		obj  runtime.Object
		want corev1.ResourceList
	}{
		{"a pod costs its requests under both names, its limits, and its number", Pods,
			pod(container("a", list("cpu=250m", "memory=64Mi"), list("cpu=1")), container("b", list("cpu=250m"), nil)),
			list("pods=1", "count/pods=1", "cpu=500m", "requests.cpu=500m", "limits.cpu=1", "memory=64Mi", "requests.memory=64Mi")},
		{"an init container that asks for more than the others together sets the pod's request", Pods, withInit,
			list("pods=1", "count/pods=1", "cpu=2", "requests.cpu=2", "limits.cpu=1", "memory=64Mi", "requests.memory=64Mi")},
		{"an extended resource is counted as requests.<name>, ephemeral storage under both names", Pods,
			pod(container("c", list("example.com/dongle=2", "ephemeral-storage=30Gi"), list("example.com/dongle=2"))),
			list("pods=1", "count/pods=1", "requests.example.com/dongle=2", "ephemeral-storage=30Gi", "requests.ephemeral-storage=30Gi")},
		{"a finished pod costs only its object count", Pods, finished, list("count/pods=1")},
		{"a pod past its deletion grace period costs only its object count", Pods, pastGrace, list("count/pods=1")},
		{"a pod still within its deletion grace period costs everything", Pods, inGrace,
			list("pods=1", "count/pods=1", "cpu=1", "requests.cpu=1")},
		{"a ClusterIP Service is one service and no node port", Services,
			&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}},
			list("services=1", "count/services=1", "services.nodeports=0", "services.loadbalancers=0")},
		{"a NodePort Service costs a node port per port", Services,
			&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}},
			list("services=1", "count/services=1", "services.nodeports=2", "services.loadbalancers=0")},
		{"a LoadBalancer without node ports costs only the ports that name one", Services,
			&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: ptr.To(false),
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}, {Port: 443}}}},
			list("services=1", "count/services=1", "services.nodeports=1", "services.loadbalancers=1")},
		{"a claim of class gold costs its storage twice, once for the class", Claims,
			&corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold"),
				Resources: corev1.VolumeResourceRequirements{Requests: list("storage=1Gi")}}},
			list("persistentvolumeclaims=1", "count/persistentvolumeclaims=1", "requests.storage=1Gi",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims=1", "gold.storageclass.storage.k8s.io/requests.storage=1Gi")},
		{"a claim whose expansion holds more than it asks for costs what it holds", Claims,
			&corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(""),
				Resources: corev1.VolumeResourceRequirements{Requests: list("storage=1Gi")}},
				Status: corev1.PersistentVolumeClaimStatus{AllocatedResources: list("storage=2Gi")}},
			list("persistentvolumeclaims=1", "count/persistentvolumeclaims=1", "requests.storage=2Gi")},
		{"a ConfigMap costs one under its legacy name and its count name", For(schema.GroupResource{Resource: "configmaps"}),
			&corev1.ConfigMap{}, list("configmaps=1", "count/configmaps=1")},
		{"a ReplicaSet costs one count/replicasets.apps", For(schema.GroupResource{Group: "apps", Resource: "replicasets"}),
			&corev1.ConfigMap{}, list("count/replicasets.apps=1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.e.Usage(tt.obj, now)
			if err != nil {
				t.Fatal(err)
			}
			if !Equals(got, tt.want) {
				t.Errorf("usage = %s, want %s", Format(got), Format(tt.want))
			}
		})
	}
}

func TestWhichQuotaNamesAResourceCountsTowards(t *testing.T) {
	hard := []corev1.ResourceName{"pods", "cpu", "limits.memory", "requests.example.com/dongle", "hugepages-2Mi",
		"services", "services.nodeports", "configmaps", "count/configmaps", "count/replicasets.apps",
		"persistentvolumeclaims", "gold.storageclass.storage.k8s.io/requests.storage"}
	tests := []struct {
		name string
		e    Evaluator
		want string
	}{
		{"pods count towards their number, compute, hugepages and requested extended resources", Pods,
			"pods,cpu,limits.memory,requests.example.com/dongle,hugepages-2Mi"},
		{"services count towards services and node ports", Services, "services,services.nodeports"},
		{"claims count towards claims and the storage of their class", Claims,
			"persistentvolumeclaims,gold.storageclass.storage.k8s.io/requests.storage"},
		{"configmaps count towards both their names", For(schema.GroupResource{Resource: "configmaps"}), "configmaps,count/configmaps"},
		{"replicasets count towards count/replicasets.apps only", For(schema.GroupResource{Group: "apps", Resource: "replicasets"}),
			"count/replicasets.apps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.e.Matching(hard)
			parts := make([]string, len(got))
			for i, n := range got {
				parts[i] = string(n)
			}
			if s := strings.Join(parts, ","); s != tt.want {
				t.Errorf("matching = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestWhichPodsFallInAQuotasScope(t *testing.T) {
	bestEffort := pod(container("c", nil, nil))
	burstable := pod(container("c", list("cpu=100m"), nil))
	terminating := pod(container("c", nil, nil))
	terminating.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
	high := pod(container("c", nil, nil))
	high.Spec.PriorityClassName = "high"
	crossNS := pod(container("c", nil, nil))
	crossNS.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
		{TopologyKey: "kubernetes.io/hostname", NamespaceSelector: &metav1.LabelSelector{}}}}}
	exists := func(s corev1.ResourceQuotaScope) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists}
	}
	priorityIn := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass,
		Operator: corev1.ScopeSelectorOpIn, Values: []string{"high", "medium"}}
	priorityNotIn := priorityIn
	priorityNotIn.Operator = corev1.ScopeSelectorOpNotIn
	tests := []struct {
		name string
		sel  corev1.ScopedResourceSelectorRequirement
		pod  *corev1.Pod
		want bool
	}{
		{"a pod without requests is BestEffort", exists(corev1.ResourceQuotaScopeBestEffort), bestEffort, true},
		{"a pod with a cpu request is not BestEffort", exists(corev1.ResourceQuotaScopeBestEffort), burstable, false},
		{"a pod with a cpu request is NotBestEffort", exists(corev1.ResourceQuotaScopeNotBestEffort), burstable, true},
		{"a pod with activeDeadlineSeconds is Terminating", exists(corev1.ResourceQuotaScopeTerminating), terminating, true},
		{"a pod without it is NotTerminating", exists(corev1.ResourceQuotaScopeNotTerminating), bestEffort, true},
		{"a pod of PriorityClass high is In (high, medium)", priorityIn, high, true},
		{"a pod of no PriorityClass is not In (high, medium)", priorityIn, bestEffort, false},
		{"a pod of no PriorityClass is NotIn (high, medium)", priorityNotIn, bestEffort, true},
		{"PriorityClass Exists takes any pod that names a class", exists(corev1.ResourceQuotaScopePriorityClass), high, true},
		{"an affinity term selecting namespaces is CrossNamespacePodAffinity", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), crossNS, true},
		{"a pod without affinity is not CrossNamespacePodAffinity", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), bestEffort, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Pods.MatchesScope(tt.sel, tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("MatchesScope = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAQuotaOnCPUOrMemoryNeedsEveryContainerToAskForIt(t *testing.T) {
	tests := []struct {
		name     string
		required []corev1.ResourceName
		pod      *corev1.Pod
		want     string // "" for no error
	}{
		{"a pod whose containers ask for cpu passes a cpu quota", []corev1.ResourceName{"requests.cpu", "pods"},
			pod(container("web", list("cpu=1"), nil)), ""},
		{"a container without a cpu limit fails a limits.cpu quota", []corev1.ResourceName{"limits.cpu"},
			pod(container("web", list("cpu=1"), nil)), "must specify limits.cpu for: web"},
		{"each missing resource names its containers, sorted", []corev1.ResourceName{"limits.cpu", "requests.memory"},
			pod(container("web", nil, nil), container("log", list("memory=1Mi"), nil)),
			"must specify limits.cpu for: log,web; requests.memory for: web"},
		{"a quota on other resources asks for nothing", []corev1.ResourceName{"requests.ephemeral-storage", "pods"},
			pod(container("web", nil, nil)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Pods.Constraints(tt.required, tt.pod)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Constraints = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCalculateUsageCountsTheObjectsInTheQuotasScopes(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"},
		Spec: corev1.ResourceQuotaSpec{Hard: list("pods=10", "requests.cpu=4", "configmaps=5", "count/foos.example.com=1"),
			Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}}}
	done := pod(container("c", list("cpu=1"), nil))
	done.Status.Phase = corev1.PodFailed
	job := pod(container("c", list("cpu=1"), nil))
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	objects := map[string][]runtime.Object{
		"pods":       {pod(container("c", list("cpu=500m"), nil)), pod(container("c", list("cpu=1"), nil)), done, job},
		"configmaps": {&corev1.ConfigMap{}, &corev1.ConfigMap{}},
	}
	listFn := func(e Evaluator, ns string) ([]runtime.Object, error) {
		return objects[e.GroupResource().Resource], nil
	}
	evaluators := []Evaluator{Pods, For(schema.GroupResource{Resource: "configmaps"})}
	got, err := CalculateUsage(q, evaluators, listFn, now)
	if err != nil {
		t.Fatal(err)
	}
	// The scope keeps the Job's pod out; the failed pod costs no cpu;
	// the ConfigMaps are outside the pod scope, so none of them counts;
	// no evaluator counts foos.
	want := list("pods=2", "requests.cpu=1500m", "configmaps=0")
	if !Equals(got, want) {
		t.Errorf("usage = %s, want %s", Format(got), Format(want))
	}
}
