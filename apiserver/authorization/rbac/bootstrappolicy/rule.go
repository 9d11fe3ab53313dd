// Package bootstrappolicy is the RBAC policy every cluster starts with,
// Kubernetes' defaults: cluster-admin for system:masters; admin, edit and
// view for administrators to hand out; what every authenticated user may
// ask about itself (system:basic-user), read for discovery
// (system:discovery) and, with anonymous users too, about the server's
// health and version (system:public-info-viewer); and the roles of the
// control plane's own users (system:kube-scheduler, ...).
//
// The API server reconciles it at every start (registry/rbac): what is
// missing is created, and a default role or binding that lost rules or
// subjects gets them back, unless its annotation
// rbac.authorization.kubernetes.io/autoupdate is "false".
//
// Where things live:
//
//	file            what it holds
//	roles.go        ClusterRoles and Roles: the defaults for people (cluster-admin, admin, edit, view, system:basic-user, ...), with their aggregation
//	components.go   the roles of the control plane's users: the scheduler, the controller manager, the kubelets, ...
//	controllers.go  ControllerServiceAccounts, and the system:controller: role of each controller with its binding
//	bindings.go     ClusterRoleBindings: who holds which default role
//	rule.go         the rule builder and the verb sets, groups and labels the policy is written with
package bootstrappolicy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The verb sets Kubernetes' policy is written with.
var (
	Read       = []string{"get", "list", "watch"}
	Write      = []string{"create", "update", "patch", "delete", "deletecollection"}
	ReadWrite  = append(slices.Clone(Read), Write...)
	ReadUpdate = []string{"get", "list", "watch", "update", "patch"}
)

// The metadata of every default object: kubectl get clusterroles -l
// kubernetes.io/bootstrapping=rbac-defaults lists them.
const (
	BootstrappingLabel = "kubernetes.io/bootstrapping"
	BootstrappingValue = "rbac-defaults"
)

// The API groups the rules name.
const (
	core          = ""
	apps          = "apps"
	authnGroup    = "authentication.k8s.io"
	authzGroup    = "authorization.k8s.io"
	autoscaling   = "autoscaling"
	batch         = "batch"
	certificates  = "certificates.k8s.io"
	coordination  = "coordination.k8s.io"
	discovery     = "discovery.k8s.io"
	events        = "events.k8s.io"
	extensions    = "extensions"
	networking    = "networking.k8s.io"
	node          = "node.k8s.io"
	policy        = "policy"
	rbacGroup     = rbacv1.GroupName
	resourceGroup = "resource.k8s.io"
	storage       = "storage.k8s.io"
)

// rule starts a PolicyRule with its verbs; groups, resources, names and
// urls fill the rest. Every list is sorted, as Kubernetes' rule builder
// sorts them, so that `kubectl describe clusterrole` prints the same.
func rule(verbs ...string) ruleBuilder {
	return ruleBuilder{Verbs: sorted(verbs)}
}

type ruleBuilder rbacv1.PolicyRule

func (r ruleBuilder) groups(g ...string) ruleBuilder    { r.APIGroups = sorted(g); return r }
func (r ruleBuilder) resources(s ...string) ruleBuilder { r.Resources = sorted(s); return r }
func (r ruleBuilder) names(n ...string) ruleBuilder     { r.ResourceNames = sorted(n); return r }
func (r ruleBuilder) urls(u ...string) ruleBuilder      { r.NonResourceURLs = sorted(u); return r }

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func rules(b ...ruleBuilder) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(b))
	for i := range b {
		out[i] = rbacv1.PolicyRule(b[i])
	}
	return out
}

// defaultMeta is a default object's name, label and annotation.
func defaultMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{BootstrappingLabel: BootstrappingValue},
		Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}}
}
