package controllermanager

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mkube/mkube/apiserver/authorization/rbac/bootstrappolicy"
	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
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
	"github.com/mkube/mkube/controllermanager/podautoscaler"
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
	// HorizontalPodAutoscaler also holds the sync period, the tolerance,
	// the stabilization and readiness delays (the
	// --horizontal-pod-autoscaler-* flags) and where metrics are read.
	HorizontalPodAutoscaler podautoscaler.Options
	// UseServiceAccountCredentials: each controller writes as its own
	// service account, kube-system/<name> (bootstrappolicy's
	// ControllerServiceAccounts), holding Kubernetes' role for it, as
	// kube-controller-manager --use-service-account-credentials does;
	// mkube impersonates the account where Kubernetes requests its
	// token. The shared informers read as the controller manager itself.
	UseServiceAccountCredentials bool
	// QueueMetrics records every controller's work queue (workqueue_*,
	// name=<controller>) in the controller manager's registry; nil
	// records nothing.
	QueueMetrics *workqueue.MetricsProvider
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
	d.QueueMetrics = opts.QueueMetrics
	as := func(name string) controller.Deps { return accountDeps(d, name, opts.UseServiceAccountCredentials) }
	// Built in this order, each asks d.Informers for what it watches and
	// adds its handlers and indexes before anything runs.
	controllers := []named{
		{replicaset.ControllerName, replicaset.New(as(replicaset.ControllerName), opts.ReplicaSet)},
		{replicaset.ReplicationManagerName, replicaset.NewReplicationManager(as(replicaset.ReplicationManagerName), opts.ReplicationController)},
		{deployment.ControllerName, deployment.New(as(deployment.ControllerName), opts.Deployment)},
		{daemon.ControllerName, daemon.New(as(daemon.ControllerName), opts.DaemonSet)},
		{statefulset.ControllerName, statefulset.New(as(statefulset.ControllerName), opts.StatefulSet)},
		{job.ControllerName, job.New(as(job.ControllerName), opts.Job)},
		{ttlafterfinished.ControllerName, ttlafterfinished.New(as(ttlafterfinished.ControllerName), opts.TTLAfterFinished)},
		{cronjob.ControllerName, cronjob.New(as(cronjob.ControllerName), opts.CronJob)},
		{endpoints.ControllerName, endpoints.New(as(endpoints.ControllerName), opts.Endpoints)},
		{endpointslice.ControllerName, endpointslice.New(as(endpointslice.ControllerName), opts.EndpointSlice)},
		{endpointslicemirroring.ControllerName, endpointslicemirroring.New(as(endpointslicemirroring.ControllerName), opts.EndpointSliceMirroring)},
		{disruption.ControllerName, disruption.New(as(disruption.ControllerName), opts.Disruption)},
		{namespace.ControllerName, namespace.New(as(namespace.ControllerName), opts.Namespace)},
		{serviceaccount.ControllerName, serviceaccount.New(as(serviceaccount.ControllerName), opts.ServiceAccount)},
		{garbagecollector.ControllerName, garbagecollector.New(as(garbagecollector.ControllerName), opts.GarbageCollector)},
		{tainteviction.ControllerName, tainteviction.New(as(tainteviction.ControllerName), opts.TaintEviction)},
		{nodelifecycle.ControllerName, nodelifecycle.New(as(nodelifecycle.ControllerName), opts.NodeLifecycle)},
		{persistentvolume.ControllerName, persistentvolume.New(as(persistentvolume.ControllerName), opts.PersistentVolume)},
		{expand.ControllerName, expand.New(as(expand.ControllerName))},
		{protection.ClaimControllerName, protection.NewClaimController(as(protection.ClaimControllerName))},
		{protection.VolumeControllerName, protection.NewVolumeController(as(protection.VolumeControllerName))},
		{clusterroleaggregation.ControllerName, clusterroleaggregation.New(as(clusterroleaggregation.ControllerName), opts.ClusterRoleAggregation)},
		{resourcequota.ControllerName, resourcequota.New(as(resourcequota.ControllerName), opts.ResourceQuota)},
		{podautoscaler.ControllerName, podautoscaler.New(as(podautoscaler.ControllerName), opts.HorizontalPodAutoscaler)},
		// Pods mounting a service-account token wait for its ConfigMap.
		{rootcacertpublisher.ControllerName, rootcacertpublisher.New(as(rootcacertpublisher.ControllerName), opts.RootCACertPublisher)},
	}
	if opts.CSRSigning.Key != nil {
		controllers = append(controllers, named{certificates.ControllerName, certificates.New(as(certificates.ControllerName), opts.CSRSigning)})
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
