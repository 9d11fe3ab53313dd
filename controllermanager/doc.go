// Package controllermanager runs mkube's controllers, as
// kube-controller-manager does: one process, one shared informer per
// resource, one pool of workers per controller.
//
// Seed 000, steps 5 and 6: the controller manager watches the API server;
// when a ReplicaSet (or ReplicationController) wants more pods than exist,
// its controller creates them. Run starts these controllers, in this
// order, each in its own package (the name is the one the log gives it):
//
//   - replicaset: keeps spec.replicas pods for each ReplicaSet, adopting
//     and releasing pods by their labels (seed 000 step 6; seed 003 三.2);
//   - replicationcontroller: the same controller for ReplicationControllers,
//     replicaset.NewReplicationManager (seed 000 step 6; seed 003 三.1);
//   - deployment: keeps one ReplicaSet per pod template for each Deployment
//     and rolls replicas from the old ones to the new (seed 003 三.3);
//   - daemonset (package daemon): one pod of each DaemonSet on every node
//     that should run it, rolled out revision by revision (package history);
//   - statefulset: each set's pods as numbered, stable identities, with
//     their own claims, made in order and replaced in place;
//   - job: runs a Job's pods until enough have succeeded or the Job fails;
//   - ttl-after-finished-controller (package ttlafterfinished): deletes a
//     finished Job once its ttlSecondsAfterFinished is up;
//   - cronjob: creates a Job at each time of a CronJob's schedule;
//   - endpoints: lists the ready and not-ready pod IPs behind each Service
//     with a selector, in the Endpoints of its name (seed 003 九);
//   - endpointslice: the same, as discovery.k8s.io EndpointSlices;
//   - endpointslicemirroring: copies the Endpoints a user writes for a
//     Service without a selector into EndpointSlices;
//   - disruption: counts the healthy pods of each PodDisruptionBudget, so
//     the API server can refuse the evictions of kubectl drain that would
//     break it (seed 000 五);
//   - namespace: empties a Terminating namespace, then removes its
//     finalizer and the namespace (seed 003 八);
//   - serviceaccount: gives every namespace its "default" ServiceAccount
//     (seed 003 六.3), and gives it back if it is deleted;
//   - garbagecollector: deletes objects whose owners are gone, and honours
//     the orphan and foreground deletion finalizers, so deleting a
//     Deployment takes its ReplicaSets and pods with it (seed 003 三);
//   - taint-eviction-controller (package tainteviction): evicts pods from
//     nodes with NoExecute taints they do not tolerate, at once or after
//     their tolerationSeconds (seed 000 四);
//   - node-lifecycle-controller (package nodelifecycle): marks the nodes
//     whose kubelet went silent Unknown, and taints nodes by their
//     conditions, not-ready and unreachable among them (seed 003 十一.6.5);
//   - persistentvolume-binder-controller (package persistentvolume): binds
//     claims to volumes, provisions and reclaims them (seed 003 五);
//   - persistentvolume-expander-controller (persistentvolume/expand): grows
//     the volumes whose claims ask for more;
//   - persistentvolumeclaim-protection-controller and
//     persistentvolume-protection-controller (persistentvolume/protection):
//     keep a claim in use, or a bound volume, until nothing needs it;
//   - clusterrole-aggregation (package clusterroleaggregation): fills the
//     ClusterRoles with an aggregationRule (admin, edit, view);
//   - resourcequota-controller (package resourcequota): copies each
//     ResourceQuota's spec.hard into its status and recounts status.used,
//     giving back what deleted and finished objects held (seed 003 八);
//   - horizontalpodautoscaling (package podautoscaler): scales each
//     HorizontalPodAutoscaler's target through its scale subresource so
//     that its metrics (metrics.k8s.io's CPU and memory, custom and
//     external metrics where served) meet their targets (seed 003 三.4);
//   - csrsigning (package certificates, only with a CA key to sign with):
//     signs the approved CertificateSigningRequests of Kubernetes' signers;
//   - root-ca-cert-publisher (package rootcacertpublisher, always): puts
//     the cluster's CA (--root-ca-file, else the kubeconfig's) into every
//     namespace as the ConfigMap kube-root-ca.crt.
//
// Package controller holds what they are all built from.
//
// Every controller is built as New(d controller.Deps, o Options) (the
// volume expander and the protection controllers take no Options): d, made
// once by Run and shared by all, holds the API client, the shared
// informers, the event recorder, the log and the clock. o holds that
// controller's own tuning, Workers first, and a zero field means
// Kubernetes' default, so Options{} is kube-controller-manager's setup: 5
// workers for ReplicaSets, ReplicationControllers, Deployments, Endpoints,
// ServiceAccounts and ResourceQuotas, 1 for disruption budgets, 10 for
// namespaces, 20 for the garbage collector, 5 for autoscalers, 8 for taint eviction and 8
// for node taints (2 for DaemonSets).
//
// It all lives in manager.go: Options, one field per controller, and Run,
// which builds them on the shared Deps, runs them and blocks until ctx
// ends. With UseServiceAccountCredentials each controller writes as its
// own service account, kube-system/<name>, as
// kube-controller-manager --use-service-account-credentials does.
package controllermanager
