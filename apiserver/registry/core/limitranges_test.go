package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// list is a ResourceList from name=quantity pairs.
func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestALimitRangeIsValidatedAsKubernetesValidatesIt(t *testing.T) {
	container := func(f func(*corev1.LimitRangeItem)) []corev1.LimitRangeItem {
		item := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer}
		f(&item)
		return []corev1.LimitRangeItem{item}
	}
	tests := []struct {
		name   string
		limits []corev1.LimitRangeItem
		want   string // the first error, as the API server words it; "" is valid
	}{
		{"the conformance test's range is valid", container(func(i *corev1.LimitRangeItem) {
			i.Min, i.Max = list("cpu", "50m", "memory", "100Mi"), list("cpu", "500m", "memory", "500Mi")
			i.Default, i.DefaultRequest = list("cpu", "500m", "memory", "500Mi"), list("cpu", "100m", "memory", "200Mi")
		}), ""},
		{"min above max", container(func(i *corev1.LimitRangeItem) { i.Min, i.Max = list("cpu", "1"), list("cpu", "500m") }),
			`spec.limits[0].min[cpu]: Invalid value: "1": min value 1 is greater than max value 500m`},
		{"a default request below min", container(func(i *corev1.LimitRangeItem) {
			i.Min, i.DefaultRequest, i.Default = list("cpu", "100m"), list("cpu", "50m"), list("cpu", "100m")
		}), `spec.limits[0].defaultRequest[cpu]: Invalid value: "50m": min value 100m is greater than default request value 50m`},
		{"a default request above max", container(func(i *corev1.LimitRangeItem) {
			i.Max, i.DefaultRequest, i.Default = list("cpu", "1"), list("cpu", "2"), list("cpu", "2")
		}), `spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is greater than max value 1`},
		{"a default request above the default limit", container(func(i *corev1.LimitRangeItem) {
			i.DefaultRequest, i.Default = list("memory", "1Gi"), list("memory", "512Mi")
		}), `spec.limits[0].defaultRequest[memory]: Invalid value: "1Gi": default request value 1Gi is greater than default limit value 512Mi`},
		{"a default above max, where Kubernetes shows the max as the value", container(func(i *corev1.LimitRangeItem) {
			i.Max, i.Default, i.DefaultRequest = list("cpu", "500m"), list("cpu", "600m"), list("cpu", "100m")
		}), `spec.limits[0].default[cpu]: Invalid value: "500m": default value 600m is greater than max value 500m`},
		{"a ratio below 1", container(func(i *corev1.LimitRangeItem) { i.MaxLimitRequestRatio = list("cpu", "500m") }),
			`spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1`},
		{"a ratio a container at min could never use", container(func(i *corev1.LimitRangeItem) {
			i.Min, i.Max, i.MaxLimitRequestRatio = list("cpu", "100m"), list("cpu", "200m"), list("cpu", "3")
			i.Default, i.DefaultRequest = list("cpu", "200m"), list("cpu", "100m")
		}), `spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "3": ratio 3 is greater than max/min = 2.000000`},
		{"hugepages cannot be overcommitted", container(func(i *corev1.LimitRangeItem) {
			i.Default, i.DefaultRequest = list("hugepages-2Mi", "4Mi"), list("hugepages-2Mi", "2Mi")
		}), `spec.limits[0].defaultRequest[hugepages-2Mi]: Invalid value: "2Mi": default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi`},
		{"a Pod item has no defaults", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Max: list("cpu", "2"), Default: list("cpu", "1")}},
			"spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"},
		{"one item per type", []corev1.LimitRangeItem{{Type: corev1.LimitTypePod}, {Type: corev1.LimitTypePod}},
			`spec.limits[1].type: Duplicate value: "Pod"`},
		{"an unknown type", []corev1.LimitRangeItem{{Type: "Node"}},
			`spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully qualified`},
		{"a container limits what containers request", container(func(i *corev1.LimitRangeItem) { i.Max = list("pods", "1") }),
			`spec.limits[0].max[pods]: Invalid value: "pods": must be a standard resource for containers`},
		{"a claim item needs a storage bound", []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim, Max: list("cpu", "1")}},
			"spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided"},
		{"an extended resource may be limited", container(func(i *corev1.LimitRangeItem) {
			i.Max, i.Default, i.DefaultRequest = list("example.com/gpu", "2"), list("example.com/gpu", "1"), list("example.com/gpu", "1")
		}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: tc.limits}}
			errs := validateLimitRange(lr)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("want valid, got %v", errs)
			case tc.want != "" && (len(errs) == 0 || errs[0].Error() != tc.want):
				t.Fatalf("got %v\nwant %s", errs, tc.want)
			}
		})
	}
}

func TestAContainerItemIsDefaultedFromMaxThenDefaultThenMin(t *testing.T) {
	item := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
		Max: list("cpu", "1", "memory", "1Gi"), Min: list("ephemeral-storage", "1Gi"), Default: list("memory", "512Mi")}
	defaultLimitRangeItem(&item)
	str := func(l corev1.ResourceList) string {
		var out []string
		for _, name := range sortedNames(l) {
			q := l[name]
			out = append(out, string(name)+"="+q.String())
		}
		return strings.Join(out, ",")
	}
	if got, want := str(item.Default), "cpu=1,memory=512Mi"; got != want {
		t.Errorf("default: got %s, want %s (max fills what is unset)", got, want)
	}
	if got, want := str(item.DefaultRequest), "cpu=1,ephemeral-storage=1Gi,memory=512Mi"; got != want {
		t.Errorf("defaultRequest: got %s, want %s (the default limit, else min)", got, want)
	}

	pod := corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("cpu", "2")}
	defaultLimitRangeItem(&pod)
	if pod.Default != nil || pod.DefaultRequest != nil {
		t.Errorf("a Pod item is not defaulted: %+v", pod)
	}
}
