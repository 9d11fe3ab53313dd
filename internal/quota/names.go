package quota

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The names a quota may limit, and the scopes it may have, as Kubernetes'
// pkg/apis/core/helper lists them; the registry validates ResourceQuotas
// with them.

// ObjectCountName is the name that counts objects of a resource:
// count/pods, count/replicasets.apps (Kubernetes'
// ObjectCountQuotaResourceNameFor).
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// standardQuotaNames are the unprefixed names a quota may limit.
var standardQuotaNames = sets.New(
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

// standardNames are every unprefixed resource name the system knows: the
// quota names and "storage".
var standardNames = standardQuotaNames.Clone().Insert(corev1.ResourceStorage)

// integerNames are counted in whole objects: a quota of 1.5 pods is
// refused.
var integerNames = sets.New(
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

// isQuotaHugePages: hugepages-2Mi and requests.hugepages-2Mi.
func isQuotaHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// IsStandardQuotaName: an unprefixed name a quota may limit.
func IsStandardQuotaName(name corev1.ResourceName) bool {
	return standardQuotaNames.Has(name) || isQuotaHugePages(name)
}

// IsStandardName: an unprefixed name the system knows at all.
func IsStandardName(name corev1.ResourceName) bool {
	return standardNames.Has(name) || isQuotaHugePages(name)
}

// IsIntegerName: a name counted in whole units (objects, extended
// resources).
func IsIntegerName(name corev1.ResourceName) bool {
	return integerNames.Has(name) || IsExtendedName(name)
}

// IsNativeName: a name in the kubernetes.io/ namespace, which unprefixed
// names are implicitly.
func IsNativeName(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// IsExtendedName: a resource outside kubernetes.io/ that a node
// advertises (example.com/dongle), which a quota limits as
// requests.example.com/dongle.
func IsExtendedName(name corev1.ResourceName) bool {
	if IsNativeName(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// standardScopes are the scopes a quota may have.
var standardScopes = sets.New(
	corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
	corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeVolumeAttributesClass,
	corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
)

// IsStandardScope: a scope Kubernetes knows.
func IsStandardScope(scope corev1.ResourceQuotaScope) bool { return standardScopes.Has(scope) }

var (
	podCountNames   = sets.New(corev1.ResourcePods)
	podComputeNames = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU,
		corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	claimNames = sets.New(corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage)
)

// IsScopeValidForName: a quota with this scope may limit this standard
// name. The pod scopes limit pods and their cpu and memory (BestEffort
// pods ask for none, so only their number); the volume attributes class
// scope limits claims and their storage.
func IsScopeValidForName(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCountNames.Has(name) || podComputeNames.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return podCountNames.Has(name)
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return claimNames.Has(name)
	}
	return true
}
