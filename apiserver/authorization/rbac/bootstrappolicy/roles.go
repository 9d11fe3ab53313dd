package bootstrappolicy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterRoles is the default ClusterRoles, in Kubernetes' words and
// rules. admin, edit and view are built by aggregation, as Kubernetes
// builds them: each has an aggregationRule, and the controller manager's
// clusterrole-aggregation controller fills its rules with those of every
// ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-<name>:
//
//	view  ← system:aggregate-to-view
//	edit  ← system:aggregate-to-edit, view
//	admin ← system:aggregate-to-admin, edit
//
// so that a ClusterRole of one's own, so labelled, extends them.
// Resources mkube does not serve (jobs, ingresses, ...) keep their place,
// so the roles read as a real cluster's.
func ClusterRoles() []rbacv1.ClusterRole {
	roles := []rbacv1.ClusterRole{
		// A "root" role which can do absolutely anything.
		{ObjectMeta: defaultMeta("cluster-admin"), Rules: rules(
			rule("*").groups("*").resources("*"),
			rule("*").urls("*"),
		)},
		// A namespace's administrator: edit, plus granting roles in it.
		{ObjectMeta: defaultMeta("admin"), AggregationRule: aggregationOf("admin")},
		// Every user-level action in a namespace, but not its RBAC, quotas or /status.
		{ObjectMeta: aggregatedTo(defaultMeta("edit"), "admin"), AggregationRule: aggregationOf("edit")},
		// Read-only access to a namespace's objects, Secrets excepted.
		{ObjectMeta: aggregatedTo(defaultMeta("view"), "edit"), AggregationRule: aggregationOf("view")},
		{ObjectMeta: aggregatedTo(defaultMeta("system:aggregate-to-admin"), "admin"), Rules: adminRules()},
		{ObjectMeta: aggregatedTo(defaultMeta("system:aggregate-to-edit"), "edit"), Rules: editRules()},
		{ObjectMeta: aggregatedTo(defaultMeta("system:aggregate-to-view"), "view"), Rules: viewRules()},
		// What any logged-in user may ask about itself (kubectl auth can-i, whoami).
		{ObjectMeta: defaultMeta("system:basic-user"), Rules: rules(
			rule("create").groups(authzGroup).resources("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule("create").groups(authnGroup).resources("selfsubjectreviews"),
		)},
		// Just enough to tell the server is up and to discover its API.
		{ObjectMeta: defaultMeta("system:discovery"), Rules: rules(
			rule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/",
				"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"),
		)},
		// The service-account issuer's OpenID Connect discovery, which
		// relying parties verify tokens with.
		{ObjectMeta: defaultMeta("system:service-account-issuer-discovery"), Rules: rules(
			rule("get").urls("/.well-known/openid-configuration", "/.well-known/openid-configuration/",
				"/openid/v1/jwks", "/openid/v1/jwks/"),
		)},
		// What an API server that delegates authentication and
		// authorization to this one needs: an aggregated API server
		// asks about each of its requests' credentials and rights.
		{ObjectMeta: defaultMeta("system:auth-delegator"), Rules: rules(
			rule("create").groups(authnGroup).resources("tokenreviews"),
			rule("create").groups(authzGroup).resources("subjectaccessreviews"),
		)},
		// Reading the components' metrics and health, for a monitoring
		// system (Prometheus) put in the group system:monitoring.
		{ObjectMeta: defaultMeta("system:monitoring"), Rules: rules(
			rule("get").urls("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"),
		)},
		// Full access to the kubelets' API, as Kubernetes defines it: what
		// a kubelet with --authorization-mode=Webhook lets the API server
		// do when it proxies logs, exec and nodes/proxy (bindings.go binds
		// it to the API server's kubelet client certificate).
		{ObjectMeta: defaultMeta("system:kubelet-api-admin"), Rules: rules(
			rule("get", "list", "watch").groups(core).resources("nodes"),
			rule("proxy").groups(core).resources("nodes"),
			rule("*").groups(core).resources("nodes/proxy", "nodes/metrics", "nodes/spec", "nodes/stats", "nodes/log"),
		)},
		// What anyone, even without credentials, may read.
		{ObjectMeta: defaultMeta("system:public-info-viewer"), Rules: rules(
			rule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/"),
		)},
	}
	return slices.Concat(roles, componentRoles(), controllerRoles())
}

// Roles is the default Roles, each in its namespace, as Kubernetes'
// NamespaceRoles: in kube-system, the reading of the ConfigMap that tells
// aggregated API servers how this server authenticates the requests it
// proxies to them (apiserver/aggregator).
func Roles() []rbacv1.Role {
	reader := defaultMeta("extension-apiserver-authentication-reader")
	reader.Namespace = systemNamespace
	return []rbacv1.Role{
		{ObjectMeta: reader, Rules: rules(
			rule("get", "list", "watch").groups("").resources("configmaps").names("extension-apiserver-authentication"),
		)},
	}
}

// AggregateLabel is the label that puts a ClusterRole's rules into the
// aggregated role name: rbac.authorization.k8s.io/aggregate-to-admin.
func AggregateLabel(name string) string { return "rbac.authorization.k8s.io/aggregate-to-" + name }

// aggregationOf is name's aggregationRule: every ClusterRole labelled
// AggregateLabel(name): "true".
func aggregationOf(name string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{AggregateLabel(name): "true"}}}}
}

// aggregatedTo labels m so that its role's rules go into the role into.
func aggregatedTo(m metav1.ObjectMeta, into string) metav1.ObjectMeta {
	m.Labels[AggregateLabel(into)] = "true"
	return m
}

// viewRules are system:aggregate-to-view's: reading a namespace's
// objects, Secrets excepted.
func viewRules() []rbacv1.PolicyRule {
	return rules(
		rule(Read...).groups(core).resources("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
		rule(Read...).groups(core).resources("limitranges", "resourcequotas", "bindings", "events",
			"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log"),
		// Reading namespaces at the namespace scope reads *this* one:
		// a hint of which namespaces a user has access to.
		rule(Read...).groups(core).resources("namespaces"),
		rule(Read...).groups(core, events).resources("events"),
		rule(Read...).groups(discovery).resources("endpointslices"),
		rule(Read...).groups(apps).resources("controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
			"daemonsets", "daemonsets/status", "deployments", "deployments/status", "deployments/scale",
			"replicasets", "replicasets/status", "replicasets/scale"),
		rule(Read...).groups(autoscaling).resources("horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		rule(Read...).groups(batch).resources("jobs", "cronjobs", "cronjobs/status", "jobs/status"),
		rule(Read...).groups(extensions).resources("daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
			"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
			"networkpolicies"),
		rule(Read...).groups(policy).resources("poddisruptionbudgets", "poddisruptionbudgets/status"),
		rule(Read...).groups(networking).resources("networkpolicies", "ingresses", "ingresses/status"),
		rule(Read...).groups(resourceGroup).resources("resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
	)
}

// editRules are system:aggregate-to-edit's, what edit adds to view:
// writing, and reading what can escalate (Secrets, exec into pods).
func editRules() []rbacv1.PolicyRule {
	return rules(
		rule(Read...).groups(core).resources("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"),
		rule("impersonate").groups(core).resources("serviceaccounts"),
		rule(Write...).groups(core).resources("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
		rule("create").groups(core).resources("pods/eviction"),
		rule(Write...).groups(core).resources("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets"),
		rule("create").groups(core).resources("serviceaccounts/token"),
		rule(Write...).groups(core, events).resources("events"),
		rule(Write...).groups(apps).resources("statefulsets", "statefulsets/scale", "daemonsets",
			"deployments", "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"),
		rule(Write...).groups(autoscaling).resources("horizontalpodautoscalers"),
		rule(Write...).groups(batch).resources("jobs", "cronjobs"),
		rule(Write...).groups(extensions).resources("daemonsets", "deployments", "deployments/scale", "deployments/rollback",
			"ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies"),
		rule(Write...).groups(policy).resources("poddisruptionbudgets"),
		rule(Write...).groups(networking).resources("networkpolicies", "ingresses"),
		rule(ReadWrite...).groups(coordination).resources("leases"),
		rule(Write...).groups(resourceGroup).resources("resourceclaims", "resourceclaimtemplates"),
	)
}

// adminRules are system:aggregate-to-admin's, what admin adds to edit:
// the namespace's own RBAC.
func adminRules() []rbacv1.PolicyRule {
	return rules(
		rule("create").groups(authzGroup).resources("localsubjectaccessreviews"),
		rule(ReadWrite...).groups(rbacGroup).resources("roles", "rolebindings"),
	)
}
