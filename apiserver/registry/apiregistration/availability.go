package apiregistration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// localAvailable is what kube-aggregator's local availability controller
// says of every Local APIService: this server answers for it.
var localAvailable = apiregistrationv1.APIServiceCondition{
	Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
	Reason: "Local", Message: "Local APIServices are always available",
}

// notProxied is why an APIService backed by a Service is never available
// here. kube-aggregator proxies requests for the group-version to the
// Service, after a discovery check (GET /apis/<group>/<version> through
// it) has passed; mkube has no such proxy, so the check is failed
// without being sent, with the reason Kubernetes gives for a server that
// does not answer.
const notProxied = "mkube does not proxy to aggregated API servers"

// availability is the Available condition the APIService should have
// (its transition time left to setAvailable): kube-aggregator's local
// and remote availability controllers. For a Service-backed one, the
// remote controller's checks in its order and words: the Service exists,
// a ClusterIP Service listens on the port, then the discovery check,
// which here always fails (notProxied). The endpoint checks between the
// last two are left out: they could only change the reason of a False.
func (c *Controller) availability(ctx context.Context, svc *apiregistrationv1.APIService) apiregistrationv1.APIServiceCondition {
	ref := svc.Spec.Service
	if ref == nil {
		return localAvailable
	}
	cond := apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionFalse}
	obj, err := c.services.Get(ctx, ref.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		cond.Reason, cond.Message = "ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)
		return cond
	case err != nil:
		cond.Status = apiregistrationv1.ConditionUnknown
		cond.Reason, cond.Message = "ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)
		return cond
	}
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	if service := obj.(*corev1.Service); service.Spec.Type == corev1.ServiceTypeClusterIP && !listensOn(service, port) {
		cond.Reason, cond.Message = "ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)
		return cond
	}
	path := "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version
	if svc.Name == "v1." {
		path = "/api/" + svc.Spec.Version
	}
	url := fmt.Sprintf("https://%s.%s.svc:%d%s", ref.Name, ref.Namespace, port, path)
	cond.Reason, cond.Message = "FailedDiscoveryCheck", fmt.Sprintf("failing or missing response from %s: %s", url, notProxied)
	return cond
}

func listensOn(service *corev1.Service, port int32) bool {
	for _, p := range service.Spec.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}
