package bootstrappolicy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The groups the authenticator puts users in.
const (
	Masters         = "system:masters"
	Authenticated   = "system:authenticated"
	Unauthenticated = "system:unauthenticated"
	nodesGroup      = "system:nodes" // every kubelet's
	ServiceAccounts = "system:serviceaccounts"
	KubeProxy       = "system:kube-proxy"
)

// ClusterRoleBindings is the default ClusterRoleBindings. Each binds the
// role of its name. Anonymous users (system:unauthenticated) get only
// system:public-info-viewer: GET /healthz, /livez, /readyz and /version,
// not discovery.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return slices.Concat([]rbacv1.ClusterRoleBinding{
		clusterBinding("cluster-admin", group(Masters)),
		clusterBinding("system:basic-user", group(Authenticated)),
		clusterBinding("system:discovery", group(Authenticated)),
		clusterBinding("system:public-info-viewer", group(Authenticated), group(Unauthenticated)),
		clusterBinding("system:service-account-issuer-discovery", group(ServiceAccounts)),
		clusterBinding("system:monitoring", group("system:monitoring")),
		clusterBinding("system:kube-controller-manager", user(KubeControllerManager)),
		clusterBinding("system:kube-scheduler", user(KubeScheduler)),
		clusterBinding("system:volume-scheduler", user(KubeScheduler)),
		// Bound to nobody since the Node authorizer (Kubernetes 1.8), but
		// kept, as Kubernetes keeps it, for an administrator to fill.
		clusterBinding("system:node"),
		// mkube's (components.go).
		clusterBinding("mkube:kube-controller-manager", user(KubeControllerManager)),
		clusterBinding("mkube:kubelet-fleet", group(KubeletFleets)),
		clusterBinding("mkube:pod-network", group(nodesGroup)),
		clusterBinding("mkube:dashboard", user(Dashboard)),
		clusterBinding("system:node-proxier", user(KubeProxy), group(nodesGroup)),
	}, controllerRoleBindings())
}

func clusterBinding(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{ObjectMeta: defaultMeta(role), Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}
