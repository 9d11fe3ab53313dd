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
	// KubeAPIServerKubeletClient is the user of the API server's client
	// certificate toward kubelets (apiserver/pki).
	KubeAPIServerKubeletClient = "kube-apiserver-kubelet-client"
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
		// The API server's own certificate toward kubelets
		// (apiserver/pki's apiserver-kubelet-client), given the kubelets'
		// API as kops binds its kubelet-api user: Kubernetes binds
		// system:kubelet-api-admin to nobody, and kubeadm puts its
		// certificate in a group bound to cluster-admin instead.
		namedClusterBinding("mkube:kube-apiserver-kubelet-client", "system:kubelet-api-admin", user(KubeAPIServerKubeletClient)),
	}, controllerRoleBindings())
}

func clusterBinding(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return namedClusterBinding(role, role, subjects...)
}

func namedClusterBinding(name, role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{ObjectMeta: defaultMeta(name), Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}
