package apiregistration

import (
	"context"
	"fmt"
	"time"

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

// passed is what kube-aggregator's remote availability controller says
// of an APIService whose Service answered the discovery check.
var passed = apiregistrationv1.APIServiceCondition{
	Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
	Reason: "Passed", Message: "all checks passed",
}

// Checker sends an APIService's discovery check to its Service (GET
// /apis/<group>/<version>): apiserver/aggregator's Aggregator.
type Checker interface {
	Check(ctx context.Context, svc *apiregistrationv1.APIService) error
}

// Rechecks of a Service-backed APIService: kube-aggregator's remote
// availability controller checks each every 30 s, and at once when its
// Service's endpoints change. mkube does not follow endpoints, so a
// failing one is checked again after 5 s instead: a server that has just
// become ready is found a few seconds later.
const (
	recheckPassed = 30 * time.Second
	recheckFailed = 5 * time.Second
)

// availability is the Available condition the APIService should have
// (its transition time left to setAvailable): kube-aggregator's local
// and remote availability controllers. For a Service-backed one, the
// remote controller's checks in its order and words: the Service exists,
// a ClusterIP Service listens on the port, then the discovery check
// (Checker). The endpoint checks between the last two are left out: the
// discovery check's error says the same ("no endpoints available for
// service").
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
	if err := c.checker.Check(ctx, svc); err != nil {
		cond.Reason, cond.Message = "FailedDiscoveryCheck", err.Error()
		return cond
	}
	return passed
}

func listensOn(service *corev1.Service, port int32) bool {
	for _, p := range service.Spec.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}
