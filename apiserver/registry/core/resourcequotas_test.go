package core

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// quotaResources is a ResourceList from "name=quantity" pairs.
func quotaResources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pairs {
		name, q, _ := strings.Cut(p, "=")
		out[corev1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

func TestAResourceQuotaIsValidatedAsKubernetesValidatesIt(t *testing.T) {
	exists := func(scope corev1.ResourceQuotaScope) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: corev1.ScopeSelectorOpExists}
	}
	tests := []struct {
		name string
		spec corev1.ResourceQuotaSpec
		want string // every error, as the API server words them, "; "-joined; "" is valid
	}{
		{"standard names, count/ names and extended resources are valid", corev1.ResourceQuotaSpec{Hard: quotaResources(
			"pods=10", "requests.cpu=4", "limits.memory=8Gi", "count/deployments.apps=5", "requests.example.com/dongle=3",
			"gold.storageclass.storage.k8s.io/requests.storage=10Gi", "hugepages-2Mi=1Gi")}, ""},
		{"an unknown unprefixed name is neither a resource type nor a quota resource",
			corev1.ResourceQuotaSpec{Hard: quotaResources("gpus=1")},
			`spec.hard[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified; ` +
				`spec.hard[gpus]: Invalid value: "gpus": must be a standard resource for quota`},
		{"storage is a resource but not one a quota limits (requests.storage is)",
			corev1.ResourceQuotaSpec{Hard: quotaResources("storage=1Gi")},
			`spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota`},
		{"a hard limit cannot be negative", corev1.ResourceQuotaSpec{Hard: quotaResources("cpu=-1")},
			`spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"objects are counted whole", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=1500m")},
			`spec.hard[pods]: Invalid value: "1500m": must be an integer`},
		{"a BestEffort quota cannot limit cpu, which such pods do not ask for", corev1.ResourceQuotaSpec{
			Hard: quotaResources("pods=5", "cpu=1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}},
			`spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource`},
		{"a pod cannot be both Terminating and NotTerminating", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"),
			Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}},
			`spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes`},
		{"an unknown scope", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"), Scopes: []corev1.ResourceQuotaScope{"Weekend"}},
			`spec.scopes: Invalid value: ["Weekend"]: unsupported scope`},
		{"a PriorityClass selector with In and values is valid", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"),
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}}, ""},
		{"In needs values", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"),
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn}}}},
			"spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"},
		{"the BestEffort scope takes only Exists", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"),
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpDoesNotExist}}}},
			`spec.scopeSelector.matchExpressions.operator: Invalid value: "DoesNotExist": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity`},
		{"selectors conflict as scopes do", corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"),
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				exists(corev1.ResourceQuotaScopeBestEffort), exists(corev1.ResourceQuotaScopeNotBestEffort)}}},
			`spec.scopeSelector.matchExpressions: Invalid value: null: conflicting scopes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"}, Spec: tt.spec}
			var got []string
			for _, err := range ResourceQuotas.Validate(q, nil) {
				got = append(got, err.Error())
			}
			if s := strings.Join(got, "; "); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestAResourceQuotasScopesAreFixedButItsLimitsMayChange(t *testing.T) {
	old := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"},
		Spec: corev1.ResourceQuotaSpec{Hard: quotaResources("pods=5"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}}
	more := old.DeepCopy()
	more.Spec.Hard = quotaResources("pods=10")
	if errs := ResourceQuotas.Validate(more, old); len(errs) > 0 {
		t.Errorf("raising the limit was refused: %v", errs)
	}
	rescoped := old.DeepCopy()
	rescoped.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}
	errs := ResourceQuotas.Validate(rescoped, old)
	if want := `spec.scopes: Invalid value: ["NotBestEffort"]: field is immutable`; len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("changing the scope: got %v, want %s", errs, want)
	}
}

func TestKubectlGetQuotaShowsUsedOverHardAsKubernetesPrintsIt(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute", CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.ResourceQuotaStatus{
			Hard: quotaResources("pods=10", "requests.cpu=2", "limits.cpu=4", "limits.memory=8Gi"),
			Used: quotaResources("pods=1", "requests.cpu=500m", "limits.cpu=1")}}
	got := ResourceQuotas.Row(q, created.Add(90*time.Second))
	want := []any{"pods: 1/10, requests.cpu: 500m/2", "limits.cpu: 1/4, limits.memory: 0/8Gi", "90s"}
	if len(got) != len(want) {
		t.Fatalf("row %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d = %q, want %q", i, got[i], want[i])
		}
	}
	var headers []string
	for _, c := range ResourceQuotas.Columns {
		headers = append(headers, c.Name)
	}
	if h := strings.Join(headers, " "); h != "Request Limit Age" {
		t.Errorf("columns after Name: %s, want Kubernetes' Request Limit Age", h)
	}
}
