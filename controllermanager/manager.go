package controllermanager

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/replicaset"
)

// Options tune the controller manager.
type Options struct {
	// Workers per controller; kube-controller-manager's defaults are 5 for
	// ReplicaSets and Deployments and 20 for the garbage collector.
	ReplicaSetWorkers, DeploymentWorkers, GCWorkers int
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

	rec := record.New(c, "controller-manager", "", log)
	rsc := replicaset.New(c, rsets, pods, rec, log)
	dc := deployment.New(c, deploys, rsets, rec, log)
	gc := garbagecollector.New(c, log,
		garbagecollector.Source{Resource: client.Pods, Informer: pods},
		garbagecollector.Source{Resource: client.ReplicaSets, Informer: rsets},
		garbagecollector.Source{Resource: client.Deployments, Informer: deploys})

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
	run(func() { dc.Run(ctx, opts.DeploymentWorkers) })
	run(func() { gc.Run(ctx, opts.GCWorkers) })
	log.Info("controllers started", "controllers", []string{"replicaset", "deployment", "garbagecollector"})
	wg.Wait()
}
