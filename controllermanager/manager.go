package controllermanager

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/disruption"
	"github.com/mkube/mkube/controllermanager/endpoints"
	"github.com/mkube/mkube/controllermanager/endpointslice"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/namespace"
	"github.com/mkube/mkube/controllermanager/nodelifecycle"
	"github.com/mkube/mkube/controllermanager/persistentvolume"
	"github.com/mkube/mkube/controllermanager/persistentvolume/expand"
	"github.com/mkube/mkube/controllermanager/persistentvolume/protection"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/controllermanager/rootcacertpublisher"
	"github.com/mkube/mkube/controllermanager/serviceaccount"
	"github.com/mkube/mkube/controllermanager/tainteviction"
)

// Options tune each controller. A zero field, and so Options{}, takes that
// controller's Kubernetes default (see its package's DefaultWorkers).
type Options struct {
	ReplicaSet            replicaset.Options
	ReplicationController replicaset.Options
	Deployment            deployment.Options
	Endpoints             endpoints.Options
	EndpointSlice         endpointslice.Options
	Disruption            disruption.Options
	Namespace             namespace.Options
	ServiceAccount        serviceaccount.Options
	// RootCACertPublisher runs only when it has a CA to publish.
	RootCACertPublisher rootcacertpublisher.Options
	GarbageCollector    garbagecollector.Options
	TaintEviction       tainteviction.Options
	// NodeLifecycle also says how often node health is checked and how
	// long a kubelet may be silent.
	NodeLifecycle nodelifecycle.Options
	// PersistentVolume also says where the volumes' data is (the nodes'
	// disks, the NFS exports), to reclaim and provision it.
	PersistentVolume persistentvolume.Options
}

// named is a controller and the name the log gives it.
type named struct {
	name string
	ctrl interface{ Run(context.Context) }
}

// Run builds the deps every controller shares (one informer per resource,
// whatever the number of controllers using it; one event queue), builds
// every controller on them, then starts them all, and blocks until ctx
// ends.
func Run(ctx context.Context, c *client.Client, log *slog.Logger, opts Options) {
	d := controller.NewDeps(c, log, nil)
	// Built in this order, each asks d.Informers for what it watches and
	// adds its handlers and indexes before anything runs.
	controllers := []named{
		{"replicaset", replicaset.New(d, opts.ReplicaSet)},
		{"replicationcontroller", replicaset.NewReplicationManager(d, opts.ReplicationController)},
		{"deployment", deployment.New(d, opts.Deployment)},
		{"endpoints", endpoints.New(d, opts.Endpoints)},
		{"endpointslice", endpointslice.New(d, opts.EndpointSlice)},
		{"disruption", disruption.New(d, opts.Disruption)},
		{"namespace", namespace.New(d, opts.Namespace)},
		{"serviceaccount", serviceaccount.New(d, opts.ServiceAccount)},
		{"garbagecollector", garbagecollector.New(d, opts.GarbageCollector)},
		{"taint-eviction-controller", tainteviction.New(d, opts.TaintEviction)},
		{"node-lifecycle-controller", nodelifecycle.New(d, opts.NodeLifecycle)},
		{"persistentvolume-binder-controller", persistentvolume.New(d, opts.PersistentVolume)},
		{"persistentvolume-expander-controller", expand.New(d)},
		{"persistentvolumeclaim-protection-controller", protection.NewClaimController(d)},
		{"persistentvolume-protection-controller", protection.NewVolumeController(d)},
	}
	if len(opts.RootCACertPublisher.CA) > 0 {
		controllers = append(controllers, named{"root-ca-cert-publisher", rootcacertpublisher.New(d, opts.RootCACertPublisher)})
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
