package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/client"
)

// ForServicesSelecting calls fn with the key of each Service (from an
// informer indexed by client.IndexByNamespace) whose selector matches any
// of these states of one pod: what the endpoints and EndpointSlice
// controllers queue when a pod changes. A Service without a selector
// selects nothing.
func ForServicesSelecting(services *client.Informer, fn func(key string), pods ...*corev1.Pod) {
	for _, obj := range services.Cache().ByIndex(client.IndexByNamespace, pods[0].Namespace) {
		svc := obj.(*corev1.Service)
		if svc.Spec.Selector == nil {
			continue
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		for _, p := range pods {
			if sel.Matches(labels.Set(p.Labels)) {
				fn(client.KeyOf(svc))
				break
			}
		}
	}
}
