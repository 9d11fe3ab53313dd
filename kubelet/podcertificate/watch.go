package podcertificate

import (
	"log/slog"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// Watch is the fleet's watch of the requests naming its nodes (one node:
// spec.nodeName=<node>, which the Node authorizer allows; a fleet:
// spec.nodeName!=, as its pod watch), and the Manager reading them. A
// request's answer syncs the pod it is for (route, with the pod from
// pods, the fleet's pod informer): an issuance starts its containers at
// once, not at the next retry.
func Watch(c *client.Client, selector string, pods *client.Informer, route func(pod runtime.Object), clk clock.PassiveClock,
	log *slog.Logger) (*Manager, *client.Informer) {
	requests := client.NewInformer(c, client.PodCertificateRequests, "", client.ListOptions{FieldSelector: selector}, log)
	get := func(ns, name string) (*certificatesv1.PodCertificateRequest, bool) {
		obj, ok := requests.Cache().Get(ns + "/" + name)
		if !ok {
			return nil, false
		}
		return obj.(*certificatesv1.PodCertificateRequest), true
	}
	// Only an answer syncs the pod: the kubelet made the request itself,
	// and a request gone is noticed at the volume resync (RefreshDue).
	answered := func(old, obj runtime.Object) {
		r := obj.(*certificatesv1.PodCertificateRequest)
		if requestState(old.(*certificatesv1.PodCertificateRequest)) != "" || requestState(r) == "" {
			return
		}
		if pod, ok := pods.Cache().Get(r.Namespace + "/" + r.Spec.PodName); ok && pod.(*corev1.Pod).UID == r.Spec.PodUID {
			route(pod)
		}
	}
	requests.AddHandler(client.Handler{OnUpdate: answered})
	return NewManager(get, clk, log), requests
}

// requestState is the request's True terminal condition (Issued, Denied,
// Failed), or "" while it is pending.
func requestState(r *certificatesv1.PodCertificateRequest) string {
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			if c.Status == metav1.ConditionTrue {
				return c.Type
			}
		}
	}
	return ""
}
