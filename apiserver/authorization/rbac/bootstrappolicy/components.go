package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// The users the control plane's programs are, the CNs of the client
// certificates apiserver/pki makes for them.
const (
	KubeScheduler         = "system:kube-scheduler"
	KubeControllerManager = "system:kube-controller-manager"
	// KubeletFleets is the group of mkube's kubelet processes of many
	// nodes (`kubelet --nodes N`); its user is mkube:kubelet-fleet.
	KubeletFleets = "mkube:kubelet-fleets"
	// Dashboard is the user of mkube's dashboard (cmd/dashboard), which
	// reads what it shows and changes nothing.
	Dashboard = "mkube:dashboard"
)

// componentRoles are the roles of the control plane's own users.
func componentRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		{ObjectMeta: defaultMeta("system:kube-scheduler"), Rules: schedulerRules()},
		{ObjectMeta: defaultMeta("system:kube-controller-manager"), Rules: controllerManagerRules()},
		// A kubelet's. Kubernetes binds it to nobody: the Node authorizer
		// grants kubelets what concerns their own node, and these rules
		// where it does not subdivide by node.
		{ObjectMeta: defaultMeta("system:node"), Rules: NodeRules()},
		// mkube's own, beyond Kubernetes' policy (the mkube: prefix says
		// so): the controller manager acts as each controller's service
		// account by impersonating it, where kube-controller-manager
		// (--use-service-account-credentials) requests the account's
		// token, which system:kube-controller-manager may for any
		// account; this grants less, the controllers' accounts only.
		{ObjectMeta: defaultMeta("mkube:kube-controller-manager"), Rules: rules(
			rule("impersonate").groups(core).resources("serviceaccounts").names(controllerAccounts()...),
		)},
		// A kubelet fleet's shared watches: every pod bound to a node (a
		// field selector spec.nodeName!= no real kubelet may ask), and
		// every Service, ConfigMap, Secret, claim, volume and node (which
		// admission checks pods against), cached once for thousands of
		// nodes; and the events its nodes report. Each
		// node's own requests go impersonated, through the Node
		// authorizer (package authorization/node).
		{ObjectMeta: defaultMeta("mkube:kubelet-fleet"), Rules: rules(
			rule("list", "watch").groups(core).resources("pods", "services", "configmaps", "secrets",
				"persistentvolumeclaims", "persistentvolumes", "nodes"),
			// The trust bundles its pods mount, and the certificate
			// requests of any of its nodes (spec.nodeName!=).
			rule("list", "watch").groups(certificates).resources("clustertrustbundles", "podcertificaterequests"),
			// The Services' endpoints, for its nodes' service proxy.
			rule("list", "watch").groups(discovery).resources("endpointslices"),
			eventsRule(),
		)},
		// The pod network: each kubelet plays a CNI daemon that routes
		// the other nodes' pod CIDRs (network/podnetwork/peers.go), and
		// reads every Node for it, as flannel's ClusterRole lets its
		// daemon. The Node authorizer allows a node only its own.
		{ObjectMeta: defaultMeta("mkube:pod-network"), Rules: rules(
			rule("get", "list", "watch").groups(core).resources("nodes"),
		)},
		// kube-proxy's, as Kubernetes defines it. mkube's kubelets play
		// kube-proxy (network/proxy/proxier.go), so bindings.go binds it to
		// system:nodes as well as to system:kube-proxy.
		{ObjectMeta: defaultMeta("system:node-proxier"), Rules: rules(
			rule("list", "watch").groups(core).resources("services", "endpoints"),
			rule("get", "list", "watch").groups(core).resources("nodes"),
			eventsRule(),
			rule("list", "watch").groups(discovery).resources("endpointslices"),
		)},
		// mkube's dashboard (package dashboard): it list-watches what its
		// page shows and reads the metrics API, and the scheduler's and
		// the controller manager's /metrics (their ports ask the API
		// server whether it may get the non-resource URL, as they ask for
		// Prometheus: system:monitoring's rule, /metrics only), and no
		// more, so that a dashboard is no hole in RBAC. Its fault buttons
		// need create on nodes/proxy, which this does not grant: run it
		// as someone who may (the admin) to use them.
		{ObjectMeta: defaultMeta("mkube:dashboard"), Rules: rules(
			rule("get", "list", "watch").groups(core).resources("nodes", "pods", "events"),
			rule("get", "list", "watch").groups(apps).resources("deployments", "replicasets"),
			rule("get", "list", "watch").groups(autoscaling).resources("horizontalpodautoscalers"),
			rule("get", "list").groups("metrics.k8s.io").resources("nodes", "pods"),
			rule("get").urls("/metrics"),
		)},
		// The scheduler's part in binding volumes.
		{ObjectMeta: defaultMeta("system:volume-scheduler"), Rules: rules(
			rule(ReadUpdate...).groups(core).resources("persistentvolumes"),
			rule(Read...).groups(storage).resources("storageclasses"),
			rule(ReadUpdate...).groups(core).resources("persistentvolumeclaims"),
		)},
	}
}

// controllerAccounts are the service accounts of the controllers mkube
// runs, sorted, each once.
func controllerAccounts() []string {
	var out []string
	for _, sa := range ControllerServiceAccounts {
		out = append(out, sa)
	}
	return sorted(out)
}

func schedulerRules() []rbacv1.PolicyRule {
	return rules(
		rule("create", "update", "patch").groups(core, events).resources("events"),
		// Leader election.
		rule("create").groups(coordination).resources("leases"),
		rule("get", "list", "update", "watch").groups(coordination).resources("leases").names("kube-scheduler"),
		rule(ReadWrite...).groups(coordination).resources("leasecandidates"),
		// What it schedules, and onto what (seed 000 §二).
		rule(Read...).groups(core).resources("nodes"),
		rule("get", "list", "watch", "delete").groups(core).resources("pods"),
		rule("create").groups(core).resources("pods/binding", "bindings"),
		rule("patch", "update").groups(core).resources("pods/status"),
		// What selects pods, for spreading and disruption budgets.
		rule(Read...).groups(core).resources("services", "replicationcontrollers"),
		rule(Read...).groups(apps, extensions).resources("replicasets"),
		rule(Read...).groups(apps).resources("statefulsets"),
		rule(Read...).groups(policy).resources("poddisruptionbudgets"),
		rule(Read...).groups(core).resources("persistentvolumeclaims", "persistentvolumes"),
		rule("create").groups(authnGroup).resources("tokenreviews"),
		rule("create").groups(authzGroup).resources("subjectaccessreviews"),
		rule(Read...).groups(storage).resources("csinodes"),
		rule(Read...).groups(storage).resources("volumeattachments"),
		rule(Read...).groups(core).resources("namespaces"),
		rule(Read...).groups(storage).resources("csidrivers"),
		rule(Read...).groups(storage).resources("csistoragecapacities"),
		rule(Read...).groups(resourceGroup).resources("deviceclasses"),
		rule("get", "list", "patch", "update", "watch").groups(resourceGroup).resources("resourceclaims"),
		rule("get", "list", "patch", "update", "watch").groups(resourceGroup).resources("resourceclaims/status"),
		rule("update").groups(core).resources("pods/finalizers"),
		rule(Read...).groups(resourceGroup).resources("resourceslices"),
		rule("create", "delete").groups(resourceGroup).resources("resourceclaims"),
		rule(Read...).groups(resourceGroup).resources("devicetaintrules"),
		rule("patch", "update").groups(resourceGroup).resources("resourceclaims/binding"),
	)
}

func controllerManagerRules() []rbacv1.PolicyRule {
	return rules(
		rule("create", "update", "patch").groups(core, events).resources("events"),
		// Leader election.
		rule("create").groups(coordination).resources("leases"),
		rule("get", "update").groups(coordination).resources("leases").names("kube-controller-manager"),
		rule("create").groups(core).resources("secrets", "serviceaccounts"),
		rule("delete").groups(core).resources("secrets"),
		rule("get").groups(core).resources("namespaces", "secrets", "serviceaccounts", "configmaps"),
		rule("update").groups(core).resources("secrets", "serviceaccounts"),
		rule("create").groups(authnGroup).resources("tokenreviews"),
		rule("create").groups(authzGroup).resources("subjectaccessreviews"),
		// Every shared informer.
		rule("list", "watch").groups("*").resources("*"),
		rule("create").groups(core).resources("serviceaccounts/token"),
	)
}

// NodeRules is what a kubelet may do: the rules of system:node, and of
// the Node authorizer for the kinds it does not judge by the node's pods.
func NodeRules() []rbacv1.PolicyRule {
	return rules(
		rule("create").groups(authnGroup).resources("tokenreviews"),
		rule("create").groups(authzGroup).resources("subjectaccessreviews", "localsubjectaccessreviews"),
		// Services, for the environment variables of containers.
		rule(Read...).groups(core).resources("services"),
		// Registering its Node and reporting its status (seed 000 step 12).
		rule("create", "get", "list", "watch").groups(core).resources("nodes"),
		rule("update", "patch").groups(core).resources("nodes/status"),
		rule("update", "patch").groups(core).resources("nodes"),
		rule("create", "update", "patch").groups(core, events).resources("events"),
		rule(Read...).groups(core).resources("pods"),
		// Mirror pods of static pods.
		rule("create", "delete").groups(core).resources("pods"),
		rule("update", "patch").groups(core).resources("pods/status"),
		rule("create").groups(core).resources("pods/eviction"),
		// Secret and ConfigMap volumes and environment variables.
		rule("get", "list", "watch").groups(core).resources("secrets", "configmaps"),
		rule("get").groups(core).resources("persistentvolumeclaims", "persistentvolumes"),
		rule("get").groups(core).resources("endpoints"),
		rule("create", "get", "list", "watch").groups(certificates).resources("certificatesigningrequests"),
		// Its heartbeat Lease.
		rule("get", "create", "update", "patch", "delete").groups(coordination).resources("leases"),
		rule("get").groups(storage).resources("volumeattachments"),
		rule("create").groups(core).resources("serviceaccounts/token"),
		rule("get", "update", "patch").groups(core).resources("persistentvolumeclaims/status"),
		rule(Read...).groups(storage).resources("csidrivers"),
		rule("get", "create", "update", "patch", "delete").groups(storage).resources("csinodes"),
		rule(Read...).groups(node).resources("runtimeclasses"),
		rule("get").groups(resourceGroup).resources("resourceclaims"),
		rule("deletecollection").groups(resourceGroup).resources("resourceslices"),
		rule(Read...).groups(certificates).resources("clustertrustbundles"),
		rule("get").groups(core).resources("serviceaccounts"),
		rule("create", "get", "list", "watch").groups(certificates).resources("podcertificaterequests"),
	)
}
