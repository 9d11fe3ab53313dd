package podautoscaler

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/podautoscaler/metrics"
)

// ControllerName is the name the controller manager runs this controller
// by, kube-controller-manager's ("horizontalpodautoscaling"), and the
// tag of its log lines.
const ControllerName = "horizontalpodautoscaling"

// EventComponent signs its Events, as in Kubernetes.
const EventComponent = "horizontal-pod-autoscaler"

// Kubernetes' defaults of kube-controller-manager's flags.
const (
	// DefaultWorkers: --concurrent-horizontal-pod-autoscaler-syncs.
	DefaultWorkers = 5
	// DefaultSyncPeriod: --horizontal-pod-autoscaler-sync-period, how
	// often each autoscaler is reconciled.
	DefaultSyncPeriod = 15 * time.Second
	// DefaultTolerance: --horizontal-pod-autoscaler-tolerance, the
	// ratio's distance from 1 below which nothing is scaled.
	DefaultTolerance = 0.1
	// DefaultDownscaleStabilization: --horizontal-pod-autoscaler-downscale-stabilization.
	DefaultDownscaleStabilization = 5 * time.Minute
	// DefaultCPUInitializationPeriod: --horizontal-pod-autoscaler-cpu-initialization-period.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultInitialReadinessDelay: --horizontal-pod-autoscaler-initial-readiness-delay.
	DefaultInitialReadinessDelay = 30 * time.Second
)

// The Events it posts, in Kubernetes' words.
const (
	ReasonSuccessfulRescale                = "SuccessfulRescale"
	ReasonFailedRescale                    = "FailedRescale"
	ReasonFailedGetScale                   = "FailedGetScale"
	ReasonFailedComputeMetricsReplicas     = "FailedComputeMetricsReplicas"
	ReasonFailedGetResourceMetric          = "FailedGetResourceMetric"
	ReasonFailedGetContainerResourceMetric = "FailedGetContainerResourceMetric"
	ReasonFailedGetPodsMetric              = "FailedGetPodsMetric"
	ReasonFailedGetObjectMetric            = "FailedGetObjectMetric"
	ReasonFailedGetExternalMetric          = "FailedGetExternalMetric"
	ReasonInvalidMetricSourceType          = "InvalidMetricSourceType"
	ReasonSelectorRequired                 = "SelectorRequired"
	ReasonInvalidSelector                  = "InvalidSelector"
	ReasonFailedUpdateStatus               = "FailedUpdateStatus"
)

// Options tune the controller; a zero field means Kubernetes' default
// (so a tolerance of exactly 0 cannot be asked for).
type Options struct {
	Workers                      int
	SyncPeriod                   time.Duration
	Tolerance                    float64
	DownscaleStabilizationWindow time.Duration
	CPUInitializationPeriod      time.Duration
	InitialReadinessDelay        time.Duration
	// Metrics is where metrics are read; nil: the metrics APIs through
	// the API server (metrics.NewREST). Tests inject a fake.
	Metrics metrics.Client
}

// HorizontalPodAutoscalers is autoscaling/v2 HorizontalPodAutoscalers, the version the API
// server stores (it converts autoscaling/v1 objects to it).
var HorizontalPodAutoscalers = client.Resource{GroupVersion: autoscalingv2.SchemeGroupVersion, Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true,
	New:     func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
	NewList: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} }}

type targetRef = autoscalingv2.CrossVersionObjectReference

// Controller reconciles each HorizontalPodAutoscaler every sync period.
type Controller struct {
	client     *client.Client
	hpas       *client.Informer
	pods       *client.Informer
	queue      *workqueue.Queue[string] // autoscaler keys, "namespace/name"
	workers    int
	syncPeriod time.Duration
	scales     *scales
	calc       *ReplicaCalculator
	history    *history
	rec        *record.Recorder
	log        *slog.Logger
	clock      clock.WithDelayedExecution

	mu        sync.Mutex
	scheduled map[string]bool // keys with a sync already timed
}

// New is the controller on d's shared informers (autoscalers and pods);
// it registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	c := &Controller{client: d.Client, hpas: d.Informers.For(HorizontalPodAutoscalers), pods: d.Informers.For(client.Pods),
		queue: workqueue.New[string](d.Clock), workers: cmp.Or(o.Workers, DefaultWorkers), syncPeriod: cmp.Or(o.SyncPeriod, DefaultSyncPeriod),
		scales: newScales(d.Client), history: newHistory(d.Clock, cmp.Or(o.DownscaleStabilizationWindow, DefaultDownscaleStabilization)),
		rec: d.Recorder.WithComponent(EventComponent), log: d.Log.With("controller", ControllerName), clock: d.Clock,
		scheduled: map[string]bool{}}
	m := o.Metrics
	if m == nil {
		m = metrics.NewREST(d.Client, c.scales.resourceFor)
	}
	c.calc = &ReplicaCalculator{metrics: m, pods: c.podsMatching, tolerances: tolerances{cmp.Or(o.Tolerance, DefaultTolerance), cmp.Or(o.Tolerance, DefaultTolerance)},
		cpuInitializationPeriod:       cmp.Or(o.CPUInitializationPeriod, DefaultCPUInitializationPeriod),
		delayOfInitialReadinessStatus: cmp.Or(o.InitialReadinessDelay, DefaultInitialReadinessDelay),
		clock:                         d.Clock, log: c.log}
	c.pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	c.hpas.AddHandler(client.Handler{OnAdd: c.enqueue, OnUpdate: func(_, obj runtime.Object) { c.enqueue(obj) }})
	return c
}

// enqueue times a sync of the autoscaler one period from now, unless one
// is timed already: as upstream, a new or changed autoscaler waits for
// the period like the others, so its own status writes never make it
// sync (and scale) faster than the period.
func (c *Controller) enqueue(obj runtime.Object) { c.schedule(client.KeyOf(obj)) }

func (c *Controller) schedule(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scheduled[key] {
		return
	}
	c.scheduled[key] = true
	c.clock.AfterFunc(c.syncPeriod, func() {
		c.mu.Lock()
		delete(c.scheduled, key)
		c.mu.Unlock()
		c.queue.Add(key)
	})
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "horizontalpodautoscaler", c.hpas, c.pods)
}

// sync reconciles one autoscaler and times its next sync. A failed
// reconcile is not retried sooner: its error is in the autoscaler's
// conditions and events, and the next period tries again (upstream's
// fixed-interval queue).
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.hpas.Cache().Get(key)
	if !ok {
		c.history.forget(key)
		return nil
	}
	hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler).DeepCopy()
	if err := c.reconcileAutoscaler(ctx, hpa, key); err != nil {
		c.log.Warn("reconcile failed; retried at the next sync period", "hpa", key, "err", err, "syncPeriod", c.syncPeriod)
	}
	c.schedule(key)
	return nil
}

// podsMatching lists the cached pods of namespace that selector matches.
func (c *Controller) podsMatching(namespace string, selector labels.Selector) []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range c.pods.Cache().ByIndex(client.IndexByNamespace, namespace) {
		if pod := obj.(*corev1.Pod); selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, pod)
		}
	}
	return out
}
