package bootstrappolicy

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// ControllerRolePrefix names the roles of the controller manager's
// controllers, each bound to the service account kube-system/<rest>, as
// Kubernetes' controller_policy.go has them.
const ControllerRolePrefix = "system:controller:"

// The namespace of the controllers' service accounts.
const systemNamespace = "kube-system"

// ControllerServiceAccounts names, for each controller mkube's controller
// manager runs (by the name its log gives it), the service account whose
// role it holds: kube-controller-manager's own names, with
// --use-service-account-credentials. The taint eviction controller is the
// node controller's, as in Kubernetes.
var ControllerServiceAccounts = map[string]string{
	"replicaset":                           "replicaset-controller",
	"replicationcontroller":                "replication-controller",
	"deployment":                           "deployment-controller",
	"daemonset":                            "daemon-set-controller",
	"endpoints":                            "endpoint-controller",
	"endpointslice":                        "endpointslice-controller",
	"endpointslicemirroring":               "endpointslicemirroring-controller",
	"disruption":                           "disruption-controller",
	"namespace":                            "namespace-controller",
	"serviceaccount":                       "service-account-controller",
	"garbagecollector":                     "generic-garbage-collector",
	"taint-eviction-controller":            "node-controller",
	"node-lifecycle-controller":            "node-controller",
	"persistentvolume-binder-controller":   "persistent-volume-binder",
	"persistentvolume-expander-controller": "expand-controller",
	"persistentvolumeclaim-protection-controller": "pvc-protection-controller",
	"persistentvolume-protection-controller":      "pv-protection-controller",
	"root-ca-cert-publisher":                      "root-ca-cert-publisher",
	"clusterrole-aggregation":                     "clusterrole-aggregation-controller",
	"resourcequota-controller":                    "resourcequota-controller",
	"csrsigning":                                  "certificate-controller",
	"job":                                         "job-controller",
	"ttl-after-finished-controller":               "ttl-after-finished-controller",
	"cronjob":                                     "cronjob-controller",
	"statefulset":                                 "statefulset-controller",
	"horizontalpodautoscaling":                    "horizontal-pod-autoscaler",
}

// eventsRule: every controller reports what it did as Events.
func eventsRule() ruleBuilder {
	return rule("create", "update", "patch").groups(core, events).resources("events")
}

// controllerRoles are Kubernetes' roles of the controllers mkube runs,
// each named system:controller:<service account>.
func controllerRoles() []rbacv1.ClusterRole {
	role := func(sa string, r ...ruleBuilder) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{ObjectMeta: defaultMeta(ControllerRolePrefix + sa), Rules: rules(r...)}
	}
	return []rbacv1.ClusterRole{
		role("certificate-controller",
			rule("get", "list", "watch", "delete").groups(certificates).resources("certificatesigningrequests"),
			rule("update").groups(certificates).resources("certificatesigningrequests/status", "certificatesigningrequests/approval"),
			rule("approve").groups(certificates).resources("signers").names(certificatesv1.KubeAPIServerClientKubeletSignerName),
			rule("sign").groups(certificates).resources("signers").names("kubernetes.io/legacy-unknown",
				certificatesv1.KubeAPIServerClientSignerName, certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeletServingSignerName),
			rule("create").groups(authzGroup).resources("subjectaccessreviews"),
			eventsRule()),
		role("clusterrole-aggregation-controller",
			rule("escalate", "get", "list", "watch", "update", "patch").groups(rbacGroup).resources("clusterroles")),
		role("cronjob-controller",
			rule("get", "list", "watch", "update").groups(batch).resources("cronjobs"),
			rule("get", "list", "watch", "create", "update", "delete", "patch").groups(batch).resources("jobs"),
			rule("update").groups(batch).resources("cronjobs/status"),
			rule("update").groups(batch).resources("cronjobs/finalizers"),
			rule("list", "watch", "delete").groups(core).resources("pods"),
			eventsRule()),
		role("daemon-set-controller",
			rule("get", "list", "watch").groups(apps, extensions).resources("daemonsets"),
			rule("update").groups(apps, extensions).resources("daemonsets/status"),
			rule("update").groups(apps, extensions).resources("daemonsets/finalizers"),
			rule("list", "watch").groups(core).resources("nodes"),
			rule("list", "watch", "create", "delete", "patch").groups(core).resources("pods"),
			rule("create").groups(core).resources("pods/binding"),
			rule("get", "list", "watch", "create", "delete", "update", "patch").groups(apps).resources("controllerrevisions"),
			eventsRule()),
		role("deployment-controller",
			rule("get", "list", "watch", "update").groups(extensions, apps).resources("deployments"),
			rule("update").groups(extensions, apps).resources("deployments/status"),
			rule("update").groups(extensions, apps).resources("deployments/finalizers"),
			rule("get", "list", "watch", "create", "update", "patch", "delete").groups(apps, extensions).resources("replicasets"),
			rule("get", "list", "watch", "update").groups(core).resources("pods"),
			eventsRule()),
		role("disruption-controller",
			rule(Read...).groups(extensions, apps).resources("deployments"),
			rule(Read...).groups(apps, extensions).resources("replicasets"),
			rule(Read...).groups(core).resources("replicationcontrollers"),
			rule(Read...).groups(policy).resources("poddisruptionbudgets"),
			rule(Read...).groups(apps).resources("statefulsets"),
			rule("update").groups(policy).resources("poddisruptionbudgets/status"),
			rule("patch", "update").groups(core).resources("pods/status"),
			rule("get").groups("*").resources("*/scale"),
			eventsRule()),
		role("endpoint-controller",
			rule(Read...).groups(core).resources("services", "pods"),
			rule("get", "list", "watch", "create", "update", "delete").groups(core).resources("endpoints"),
			rule("create").groups(core).resources("endpoints/restricted"),
			eventsRule()),
		role("endpointslice-controller",
			rule(Read...).groups(core).resources("services", "pods", "nodes"),
			rule("update").groups(core).resources("services/finalizers"),
			rule("get", "list", "watch", "create", "update", "delete").groups(discovery).resources("endpointslices"),
			eventsRule()),
		role("endpointslicemirroring-controller",
			rule("get", "list", "watch").groups(core).resources("services", "endpoints"),
			rule("update").groups(core).resources("services/finalizers", "endpoints/finalizers"),
			rule("get", "list", "create", "update", "delete").groups(discovery).resources("endpointslices"),
			eventsRule()),
		role("expand-controller",
			rule("get", "list", "watch", "update", "patch").groups(core).resources("persistentvolumes"),
			rule("update", "patch").groups(core).resources("persistentvolumeclaims/status"),
			rule(Read...).groups(core).resources("persistentvolumeclaims"),
			eventsRule()),
		role("generic-garbage-collector",
			rule("get", "list", "watch", "patch", "update", "delete").groups("*").resources("*"),
			eventsRule()),
		// Any kind's scale; the pods and their metrics, of every metrics API.
		role("horizontal-pod-autoscaler",
			rule("get", "list", "watch").groups(autoscaling).resources("horizontalpodautoscalers"),
			rule("update").groups(autoscaling).resources("horizontalpodautoscalers/status"),
			rule("get", "update").groups("*").resources("*/scale"),
			rule("list").groups(core).resources("pods"),
			rule("list").groups("metrics.k8s.io").resources("pods"),
			rule("get", "list").groups("custom.metrics.k8s.io").resources("*"),
			rule("get", "list").groups("external.metrics.k8s.io").resources("*"),
			eventsRule()),
		role("job-controller",
			rule("get", "list", "watch", "update", "patch").groups(batch).resources("jobs"),
			rule("update").groups(batch).resources("jobs/status"),
			rule("update").groups(batch).resources("jobs/finalizers"),
			rule("list", "watch", "create", "delete", "patch").groups(core).resources("pods"),
			eventsRule()),
		role("namespace-controller",
			rule("get", "list", "watch", "delete").groups(core).resources("namespaces"),
			rule("update").groups(core).resources("namespaces/finalize", "namespaces/status"),
			rule("get", "list", "watch", "delete", "deletecollection").groups("*").resources("*")),
		role("node-controller",
			rule("get", "list", "watch", "update", "delete", "patch").groups(core).resources("nodes"),
			rule("patch", "update").groups(core).resources("nodes/status"),
			rule("patch", "update").groups(core).resources("pods/status"),
			rule("list", "watch", "get", "delete").groups(core).resources("pods"),
			rule(Read...).groups(coordination).resources("leases"),
			eventsRule()),
		role("persistent-volume-binder",
			rule("get", "list", "watch", "update", "create", "delete").groups(core).resources("persistentvolumes"),
			rule("update").groups(core).resources("persistentvolumes/status"),
			rule("get", "list", "watch", "update").groups(core).resources("persistentvolumeclaims"),
			rule("update").groups(core).resources("persistentvolumeclaims/status"),
			rule("list", "watch", "get", "create", "delete").groups(core).resources("pods"),
			rule(Read...).groups(storage).resources("storageclasses"),
			rule("list", "watch").groups(core).resources("nodes"),
			eventsRule(),
			rule("watch").groups(core).resources("events")),
		role("pv-protection-controller",
			rule("get", "list", "watch", "update").groups(core).resources("persistentvolumes"),
			eventsRule()),
		role("pvc-protection-controller",
			rule("get", "list", "watch", "update").groups(core).resources("persistentvolumeclaims"),
			rule("update").groups(core).resources("persistentvolumeclaims/status"),
			rule("list", "watch", "get").groups(core).resources("pods"),
			eventsRule()),
		role("replicaset-controller",
			rule("get", "list", "watch", "update").groups(apps, extensions).resources("replicasets"),
			rule("update").groups(apps, extensions).resources("replicasets/status"),
			rule("update").groups(apps, extensions).resources("replicasets/finalizers"),
			rule("list", "watch", "patch", "create", "delete").groups(core).resources("pods"),
			eventsRule()),
		role("replication-controller",
			rule("get", "list", "watch", "update").groups(core).resources("replicationcontrollers"),
			rule("update").groups(core).resources("replicationcontrollers/status"),
			rule("update").groups(core).resources("replicationcontrollers/finalizers"),
			rule("list", "watch", "patch", "create", "delete").groups(core).resources("pods"),
			eventsRule()),
		role("resourcequota-controller",
			// It counts whatever a quota may name, so it may watch
			// everything; it writes nothing but quota status.
			rule("list", "watch").groups("*").resources("*"),
			rule("update").groups(core).resources("resourcequotas/status"),
			eventsRule()),
		role("root-ca-cert-publisher",
			rule("create", "update").groups(core).resources("configmaps"),
			eventsRule()),
		role("ttl-after-finished-controller",
			rule("get", "list", "watch", "delete").groups(batch).resources("jobs"),
			eventsRule()),
		role("service-account-controller",
			rule("create").groups(core).resources("serviceaccounts"),
			eventsRule()),
		role("statefulset-controller",
			rule("list", "watch").groups(core).resources("pods"),
			rule("get", "list", "watch").groups(apps).resources("statefulsets"),
			rule("update").groups(apps).resources("statefulsets/status"),
			rule("update").groups(apps).resources("statefulsets/finalizers"),
			rule("get", "create", "delete", "update", "patch").groups(core).resources("pods"),
			rule("get", "create", "delete", "update", "patch", "list", "watch").groups(apps).resources("controllerrevisions"),
			rule("get", "create", "list", "watch").groups(core).resources("persistentvolumeclaims"),
			rule("update", "delete").groups(core).resources("persistentvolumeclaims"),
			rule("update").groups(core).resources("pods/finalizers"),
			eventsRule()),
	}
}

// controllerRoleBindings bind each controller's role to its service
// account in kube-system, as Kubernetes does.
func controllerRoleBindings() []rbacv1.ClusterRoleBinding {
	var out []rbacv1.ClusterRoleBinding
	for _, r := range controllerRoles() {
		sa := r.Name[len(ControllerRolePrefix):]
		out = append(out, clusterBinding(r.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: systemNamespace}))
	}
	return out
}
