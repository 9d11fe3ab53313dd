package quota

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Services is the service evaluator (Kubernetes' serviceEvaluator): a
// Service costs "services: 1" and its object count, a NodePort Service
// one services.nodeports per port, and a LoadBalancer one
// services.loadbalancers and its node ports (only the ports that name a
// nodePort when allocateLoadBalancerNodePorts is false). Services have
// no scopes.
var Services Evaluator = serviceEvaluator{}

type serviceEvaluator struct{}

var serviceCountName = ObjectCountName(schema.GroupResource{Resource: "services"})

var serviceNames = sets.New(serviceCountName, corev1.ResourceServices, corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers)

func (serviceEvaluator) GroupResource() schema.GroupResource {
	return schema.GroupResource{Resource: "services"}
}

// Handles creates and updates: an update can change the type.
func (serviceEvaluator) Handles(w Write) bool { return w.Subresource == "" }

func (serviceEvaluator) Matching(names []corev1.ResourceName) []corev1.ResourceName {
	return intersect(names, serviceNames)
}

func (serviceEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

func (serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (serviceEvaluator) Usage(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
	svc := obj.(*corev1.Service)
	out := corev1.ResourceList{serviceCountName: one(), corev1.ResourceServices: one(),
		corev1.ResourceServicesNodePorts: zero(), corev1.ResourceServicesLoadBalancers: zero()}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		// Node ports are not allocated yet when a new Service is
		// admitted, so this counts the intent, not the ports.
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one()
	}
	return out, nil
}

// QuotaType is the part of a Service's type that quota counts: NodePort,
// LoadBalancer, or "" for the others. The controller recounts when it
// changes.
func QuotaType(svc *corev1.Service) corev1.ServiceType {
	if t := svc.Spec.Type; t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer {
		return t
	}
	return ""
}

// intersect returns the names that are in set, in names' order.
func intersect(names []corev1.ResourceName, set sets.Set[corev1.ResourceName]) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range names {
		if set.Has(name) {
			out = append(out, name)
		}
	}
	return out
}
