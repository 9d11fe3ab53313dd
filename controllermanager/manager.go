package controllermanager

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/disruption"
	"github.com/mkube/mkube/controllermanager/endpoints"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/namespace"
	"github.com/mkube/mkube/controllermanager/nodelifecycle"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/controllermanager/tainteviction"
)

// Options tune the controller manager.
type Options struct {
	// Workers per controller; kube-controller-manager's defaults are 5 for
	// ReplicaSets and Deployments and 20 for the garbage collector.
	ReplicaSetWorkers, DeploymentWorkers, GCWorkers int
	// TaintEvictionWorkers: Kubernetes' taint eviction controller runs 8
	// (UpdateWorkerSize); each sync is a cache read and at most one DELETE.
	TaintEvictionWorkers int
	// NodeLifecycle: how often node health is checked and how long a
	// kubelet may be silent. Zero fields take Kubernetes' defaults.
	NodeLifecycle nodelifecycle.Options
}

// Run starts shared informers (one list-watch per resource, whatever the
// number of controllers using it) and every controller, and blocks until
// ctx ends.
func Run(ctx context.Context, c *client.Client, log *slog.Logger, opts Options) {
	informers := map[string]*client.Informer{}
	inform := func(res client.Resource) *client.Informer {
		inf := client.NewInformer(c, res, "", client.ListOptions{}, log)
		informers[res.Name] = inf
		return inf
	}
	pods, rsets, deploys := inform(client.Pods), inform(client.ReplicaSets), inform(client.Deployments)
	rcs := inform(client.ReplicationControllers)
	nodes := inform(client.Nodes)
	services, endpointsInf := inform(client.Services), inform(client.Endpoints)
	pdbs := inform(client.PodDisruptionBudgets)
	namespaces := inform(client.Namespaces)
	leases := inform(client.Leases)

	rec := record.New(c, "controller-manager", "", log)
	rsc := replicaset.New(c, rsets, pods, rec.WithComponent("replicaset-controller"), log)
	rcc := replicaset.NewReplicationManager(c, rcs, pods, rec.WithComponent("replication-controller"), log)
	dc := deployment.New(c, deploys, rsets, rec.WithComponent("deployment-controller"), log)
	ec := endpoints.New(c, services, endpointsInf, pods, log)
	dic := disruption.New(c, pdbs, pods, rsets, rcs, deploys, log)
	nsc := namespace.New(c, namespaces, log)
	gc := garbagecollector.New(c, log,
		garbagecollector.Source{Resource: client.Pods, Informer: pods},
		garbagecollector.Source{Resource: client.ReplicaSets, Informer: rsets},
		garbagecollector.Source{Resource: client.ReplicationControllers, Informer: rcs},
		garbagecollector.Source{Resource: client.Deployments, Informer: deploys})
	// tainteviction.New adds the pods-by-node index (client.IndexPodsByNode)
	// to the shared pod informer: how it finds the pods of a tainted node.
	tec := tainteviction.New(c, nodes, pods, rec.WithComponent("taint-eviction-controller"), log, nil)
	nlc := nodelifecycle.New(c, nodes, leases, pods, rec.WithComponent("node-controller"), log, withDefaults(opts.NodeLifecycle), nil)

	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }() // owner: Run; each returns when ctx ends
	}
	for _, inf := range informers {
		run(func() { inf.Run(ctx) })
	}
	run(func() { rec.Run(ctx) })
	run(func() { rsc.Run(ctx, opts.ReplicaSetWorkers) })
	run(func() { rcc.Run(ctx, opts.ReplicaSetWorkers) })
	run(func() { dc.Run(ctx, opts.DeploymentWorkers) })
	run(func() { ec.Run(ctx, opts.DeploymentWorkers) })
	run(func() { dic.Run(ctx, opts.DeploymentWorkers) })
	run(func() { nsc.Run(ctx, 2) })
	run(func() { gc.Run(ctx, opts.GCWorkers) })
	run(func() { tec.Run(ctx, opts.TaintEvictionWorkers) })
	run(func() { nlc.Run(ctx, 1) })
	log.Info("controllers started", "controllers", []string{"replicaset", "replicationcontroller", "deployment", "endpoints", "disruption", "namespace", "garbagecollector", "taint-eviction-controller", "node-lifecycle-controller"})
	wg.Wait()
}

// withDefaults fills the zero fields of o with Kubernetes' defaults.
func withDefaults(o nodelifecycle.Options) nodelifecycle.Options {
	d := nodelifecycle.DefaultOptions
	if o.MonitorPeriod <= 0 {
		o.MonitorPeriod = d.MonitorPeriod
	}
	if o.MonitorGracePeriod <= 0 {
		o.MonitorGracePeriod = d.MonitorGracePeriod
	}
	if o.StartupGracePeriod <= 0 {
		o.StartupGracePeriod = d.StartupGracePeriod
	}
	return o
}
