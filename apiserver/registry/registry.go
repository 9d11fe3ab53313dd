// Package registry is the list of every kind mkube serves. Each kind is
// declared in the folder of its API group (registry/core, registry/apps,
// ...); adding one is a file there and a line here.
//
// It all lives in registry.go: Resources, every kind, one line each, and
// New, the Registry of them all.
package registry

import (
	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/admissionregistration"
	"github.com/mkube/mkube/apiserver/registry/apiextensions"
	"github.com/mkube/mkube/apiserver/registry/apiregistration"
	"github.com/mkube/mkube/apiserver/registry/apps"
	"github.com/mkube/mkube/apiserver/registry/authentication"
	"github.com/mkube/mkube/apiserver/registry/authorization"
	"github.com/mkube/mkube/apiserver/registry/autoscaling"
	"github.com/mkube/mkube/apiserver/registry/batch"
	"github.com/mkube/mkube/apiserver/registry/certificates"
	"github.com/mkube/mkube/apiserver/registry/coordination"
	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/apiserver/registry/discovery"
	"github.com/mkube/mkube/apiserver/registry/events"
	"github.com/mkube/mkube/apiserver/registry/flowcontrol"
	"github.com/mkube/mkube/apiserver/registry/networking"
	"github.com/mkube/mkube/apiserver/registry/node"
	"github.com/mkube/mkube/apiserver/registry/policy"
	"github.com/mkube/mkube/apiserver/registry/rbac"
	"github.com/mkube/mkube/apiserver/registry/resource"
	"github.com/mkube/mkube/apiserver/registry/scheduling"
	"github.com/mkube/mkube/apiserver/registry/storage"
	"github.com/mkube/mkube/apiserver/registry/storagemigration"
)

// Resources is every kind, one line each.
var Resources = []*apiserver.Resource{
	core.Pods,
	core.Nodes,
	core.Namespaces,
	core.Events,
	core.ConfigMaps,
	core.Secrets,
	core.Services,
	core.Endpoints,
	discovery.EndpointSlices,
	core.ServiceAccounts,
	core.ReplicationControllers,
	core.PodTemplates,
	core.LimitRanges,
	core.ResourceQuotas,
	apps.ReplicaSets,
	apps.Deployments,
	apps.ControllerRevisions,
	autoscaling.HorizontalPodAutoscalers,
	autoscaling.HorizontalPodAutoscalersV1,
	apps.DaemonSets,
	apps.StatefulSets,
	batch.Jobs,
	batch.CronJobs,
	coordination.Leases,
	scheduling.PriorityClasses,
	policy.PodDisruptionBudgets,
	authentication.SelfSubjectReviews,
	authentication.TokenReviews,
	authorization.SelfSubjectAccessReviews,
	authorization.SelfSubjectRulesReviews,
	authorization.SubjectAccessReviews,
	authorization.LocalSubjectAccessReviews,
	rbac.Roles,
	rbac.RoleBindings,
	rbac.ClusterRoles,
	rbac.ClusterRoleBindings,
	events.Events,
	networking.Ingresses,
	networking.IngressClasses,
	networking.ServiceCIDRs,
	networking.IPAddresses,
	node.RuntimeClasses,
	storage.StorageClasses,
	storage.CSINodes,
	storage.CSIDrivers,
	storage.CSIStorageCapacities,
	storage.VolumeAttachments,
	storage.VolumeAttributesClasses,
	core.PersistentVolumes,
	core.PersistentVolumeClaims,
	apiextensions.CustomResourceDefinitions,
	apiregistration.APIServices,
	certificates.CertificateSigningRequests,
	certificates.ClusterTrustBundles,
	certificates.PodCertificateRequests,
	flowcontrol.FlowSchemas,
	flowcontrol.PriorityLevelConfigurations,
	admissionregistration.MutatingWebhookConfigurations,
	admissionregistration.ValidatingWebhookConfigurations,
	admissionregistration.ValidatingAdmissionPolicies,
	admissionregistration.ValidatingAdmissionPolicyBindings,
	admissionregistration.MutatingAdmissionPolicies,
	admissionregistration.MutatingAdmissionPolicyBindings,
	resource.DeviceClasses,
	resource.ResourceClaims,
	resource.ResourceClaimTemplates,
	resource.ResourceSlices,
	resource.DeviceTaintRules,
	storagemigration.StorageVersionMigrations,
}

// New is a registry of every kind, for apiserver.Config.
func New() *apiserver.Registry { return apiserver.NewRegistry(Resources...) }
