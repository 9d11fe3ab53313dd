package controllermanager

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mkube/mkube/apiserver/authorization/rbac/bootstrappolicy"
	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/certificates"
	"github.com/mkube/mkube/controllermanager/clusterroleaggregation"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/cronjob"
	"github.com/mkube/mkube/controllermanager/daemon"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/disruption"
	"github.com/mkube/mkube/controllermanager/endpoints"
	"github.com/mkube/mkube/controllermanager/endpointslice"
	"github.com/mkube/mkube/controllermanager/endpointslicemirroring"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/job"
	"github.com/mkube/mkube/controllermanager/namespace"
	"github.com/mkube/mkube/controllermanager/nodelifecycle"
	"github.com/mkube/mkube/controllermanager/persistentvolume"
	"github.com/mkube/mkube/controllermanager/persistentvolume/expand"
	"github.com/mkube/mkube/controllermanager/persistentvolume/protection"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/controllermanager/resourcequota"
	"github.com/mkube/mkube/controllermanager/rootcacertpublisher"
	"github.com/mkube/mkube/controllermanager/serviceaccount"
	"github.com/mkube/mkube/controllermanager/statefulset"
	"github.com/mkube/mkube/controllermanager/tainteviction"
	"github.com/mkube/mkube/controllermanager/ttlafterfinished"
)

// Options tune each controller. A zero field, and so Options{}, takes that
// controller's Kubernetes default (see its package's DefaultWorkers).
type Options struct {
	ReplicaSet             replicaset.Options
	ReplicationController  replicaset.Options
	Deployment             deployment.Options
	DaemonSet              daemon.Options
	StatefulSet            statefulset.Options
	Job                    job.Options
	TTLAfterFinished       ttlafterfinished.Options
	CronJob                cronjob.Options
	Endpoints              endpoints.Options
	EndpointSlice          endpointslice.Options
	EndpointSliceMirroring endpointslicemirroring.Options
	Disruption             disruption.Options
	Namespace              namespace.Options
	ServiceAccount         serviceaccount.Options
	// RootCACertPublisher always runs, as in Kubernetes: without a CA
	// it publishes an empty one, and logs an error saying so.
	RootCACertPublisher rootcacertpublisher.Options
	// CSRSigning runs only when it has a CA's key to sign with.
	CSRSigning       certificates.Options
	GarbageCollector garbagecollector.Options
	TaintEviction    tainteviction.Options
	// NodeLifecycle also says how often node health is checked and how
	// long a kubelet may be silent.
	NodeLifecycle nodelifecycle.Options
	// PersistentVolume also says where the volumes' data is (the nodes'
	// disks, the NFS exports), to reclaim and provision it.
	PersistentVolume       persistentvolume.Options
	ClusterRoleAggregation clusterroleaggregation.Options
	// ResourceQuota also says how often every quota is recounted in full.
	ResourceQuota resourcequota.Options
	// UseServiceAccountCredentials: each controller writes as its own
	// service account, kube-system/<name> (bootstrappolicy's
	// ControllerServiceAccounts), holding Kubernetes' role for it, as
	// kube-controller-manager --use-service-account-credentials does;
	// mkube impersonates the account where Kubernetes requests its
	// token. The shared informers read as the controller manager itself.
	UseServiceAccountCredentials bool
}

// accountDeps are d with, if useSA, a client acting as the service
// account of the controller called name, when it has one.
func accountDeps(d controller.Deps, name string, useSA bool) controller.Deps {
	sa, ok := bootstrappolicy.ControllerServiceAccounts[name]
	if !useSA || !ok {
		return d
	}
	d.Client = d.Client.Impersonate("system:serviceaccount:kube-system:" + sa)
	return d
}

// runner is what every controller is to the manager: Run blocks until
// ctx ends (package controller's shape).
type runner interface{ Run(ctx context.Context) }

// named is a controller and the name the log gives it.
type named struct {
	name string
	ctrl runner
}

// Run builds the deps every controller shares (one informer per resource,
// whatever the number of controllers using it; one event queue), builds
// every controller on them, then runs them all, each on a goroutine of
// its own, and blocks until ctx ends and every one has returned.
func Run(ctx context.Context, c *client.Client, log *slog.Logger, opts Options) {
	d := controller.NewDeps(c, log, nil)
	as := func(name string) controller.Deps { return accountDeps(d, name, opts.UseServiceAccountCredentials) }
	// Built in this order, each asks d.Informers for what it watches and
	// adds its handlers and indexes before anything runs.
	controllers := []named{
		{"replicaset", replicaset.New(as("replicaset"), opts.ReplicaSet)},
		{"replicationcontroller", replicaset.NewReplicationManager(as("replicationcontroller"), opts.ReplicationController)},
		{"deployment", deployment.New(as("deployment"), opts.Deployment)},
		{"daemonset", daemon.New(as("daemonset"), opts.DaemonSet)},
		{"statefulset", statefulset.New(as("statefulset"), opts.StatefulSet)},
		{"job", job.New(as("job"), opts.Job)},
		{"ttl-after-finished-controller", ttlafterfinished.New(as("ttl-after-finished-controller"), opts.TTLAfterFinished)},
		{"cronjob", cronjob.New(as("cronjob"), opts.CronJob)},
		{"endpoints", endpoints.New(as("endpoints"), opts.Endpoints)},
		{"endpointslice", endpointslice.New(as("endpointslice"), opts.EndpointSlice)},
		{"endpointslicemirroring", endpointslicemirroring.New(as("endpointslicemirroring"), opts.EndpointSliceMirroring)},
		{"disruption", disruption.New(as("disruption"), opts.Disruption)},
		{"namespace", namespace.New(as("namespace"), opts.Namespace)},
		{"serviceaccount", serviceaccount.New(as("serviceaccount"), opts.ServiceAccount)},
		{"garbagecollector", garbagecollector.New(as("garbagecollector"), opts.GarbageCollector)},
		{"taint-eviction-controller", tainteviction.New(as("taint-eviction-controller"), opts.TaintEviction)},
		{"node-lifecycle-controller", nodelifecycle.New(as("node-lifecycle-controller"), opts.NodeLifecycle)},
		{"persistentvolume-binder-controller", persistentvolume.New(as("persistentvolume-binder-controller"), opts.PersistentVolume)},
		{"persistentvolume-expander-controller", expand.New(as("persistentvolume-expander-controller"))},
		{"persistentvolumeclaim-protection-controller", protection.NewClaimController(as("persistentvolumeclaim-protection-controller"))},
		{"persistentvolume-protection-controller", protection.NewVolumeController(as("persistentvolume-protection-controller"))},
		{"clusterrole-aggregation", clusterroleaggregation.New(as("clusterrole-aggregation"), opts.ClusterRoleAggregation)},
		{"resourcequota-controller", resourcequota.New(as("resourcequota-controller"), opts.ResourceQuota)},
		// Pods mounting a service-account token wait for its ConfigMap.
		{"root-ca-cert-publisher", rootcacertpublisher.New(as("root-ca-cert-publisher"), opts.RootCACertPublisher)},
	}
	if opts.CSRSigning.Key != nil {
		controllers = append(controllers, named{"csrsigning", certificates.New(as("csrsigning"), opts.CSRSigning)})
	}

	var wg sync.WaitGroup // owner: Run; every goroutine returns when ctx ends
	wg.Go(func() { d.Run(ctx) })
	names := make([]string, len(controllers))
	for i, ct := range controllers {
		names[i] = ct.name
		wg.Go(func() { ct.ctrl.Run(ctx) })
	}
	log.Info("controllers started", "controllers", names)
	wg.Wait()
}
