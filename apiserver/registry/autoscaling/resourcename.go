package autoscaling

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The resource names Kubernetes calls standard (pkg/apis/core/helper):
// those of quotas and limits, and the fewer a container requests.
var (
	standardResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)
	standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
)

// validateContainerResourceName is Kubernetes' ValidateContainerResourceName,
// for a ContainerResource metric: a qualified name; without a domain, one
// a container requests (cpu, memory, ephemeral-storage, hugepages-*);
// with one, kubernetes.io's or an extended resource. A bad name can earn
// two messages, as in Kubernetes.
func validateContainerResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	s := string(name)
	for _, msg := range validation.IsQualifiedName(s) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	hugePages := strings.HasPrefix(s, corev1.ResourceHugePagesPrefix)
	if len(errs) == 0 && !strings.Contains(s, "/") && !standardResources.Has(name) && !hugePages &&
		!strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) {
		errs = append(errs, field.Invalid(p, name, "must be a standard resource type or fully qualified"))
	}
	if !strings.Contains(s, "/") {
		if !standardContainerResources.Has(name) && !hugePages {
			errs = append(errs, field.Invalid(p, name, "must be a standard resource for containers"))
		}
		return errs
	}
	native := strings.Contains(s, "kubernetes.io/")
	extended := !strings.HasPrefix(s, "requests.") && len(validation.IsQualifiedName("requests."+s)) == 0
	if !native && !extended {
		errs = append(errs, field.Invalid(p, name, "doesn't follow extended resource name standard"))
	}
	return errs
}
