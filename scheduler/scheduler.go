package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/config"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins"
	"github.com/mkube/mkube/scheduler/framework/preemption"
	"github.com/mkube/mkube/scheduler/metrics"
	"github.com/mkube/mkube/scheduler/queue"
)

// maxConcurrentAPICalls bounds the bindings and status updates in flight
// at once. It matches the client's 64 idle connections per host, so each
// call reuses a kept-alive connection; beyond that, calls wait their turn
// on their own goroutines while the scheduling loop goes on.
const maxConcurrentAPICalls = 64

// podInformerSelector is the pods the scheduler watches, the selector
// kube-scheduler uses: every pod that has not finished. Unbound ones are
// its work; bound ones use up their nodes. A pod that Succeeds or Fails
// leaves the watch (a DELETED event), which frees its node's resources.
const podInformerSelector = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

// The reasons of the scheduler's events, as kube-scheduler gives them:
// `kubectl describe pod` shows them.
const (
	ReasonScheduled        = "Scheduled"
	ReasonFailedScheduling = "FailedScheduling"
	ReasonPreempted        = "Preempted"
)

// Config configures a Scheduler. Only Client is required.
type Config struct {
	Client *client.Client
	Log    *slog.Logger
	// SchedulerName is the spec.schedulerName this scheduler serves;
	// default "default-scheduler". Pods naming another scheduler are left
	// to it.
	SchedulerName string
	// PercentageOfNodesToScore: in big clusters, stop filtering once this
	// percentage of the nodes has been found feasible (at least 100 nodes).
	// 0 means Kubernetes' adaptive default: 50% minus 1% per 125 nodes,
	// at least 5%.
	PercentageOfNodesToScore int32
	// Queue timing; zero values mean kube-scheduler's defaults (1s, 10s, 5m).
	PodInitialBackoff                 time.Duration
	PodMaxBackoff                     time.Duration
	PodMaxInUnschedulablePodsDuration time.Duration
	// Profile chooses the plugins and their weights (a --config file's
	// profiles[0]); nil means the default profile, config.DefaultPlugins.
	Profile *config.Profile
	// Plugins, if set, replaces Profile with plugins already built (tests).
	Plugins []framework.PluginSpec
	// Clock and Rand may be set by tests. Rand breaks ties between nodes
	// and picks where preemption's dry run starts; only the scheduling
	// loop uses it.
	Clock clock.WithTicker
	// Metrics records kube-scheduler's series (package metrics) in the
	// scheduler's registry; nil records none.
	Metrics *metrics.Metrics
	// Steps observes seed steps 9 and 10 in mkube_pod_step_duration_seconds;
	// nil observes none.
	Steps *seedstep.Durations
	Rand  *rand.Rand
}

// Scheduler assigns pods to nodes.
type Scheduler struct {
	client    *client.Client
	log       *slog.Logger
	name      string
	clock     clock.WithTicker
	metrics   *metrics.Metrics // nil records nothing
	steps     *seedstep.Durations
	recorder  *record.Recorder // Scheduled and FailedScheduling events
	startOnce sync.Once        // Start runs the recorder and the informers once
	framework *framework.Framework
	queue     *queue.PriorityQueue
	cache     *cache.Cache
	// preemption is the PostFilter step: it runs for a pod that fits no
	// node (preemption.go). nil when the profile disables it.
	preemption *preemption.Evaluator

	informers         *client.SharedInformers // the five below and New's ReplicaSet and ReplicationController ones, run together
	podInformer       *client.Informer        // unfinished pods: unbound ones feed the queue, bound ones the cache
	nodeInformer      *client.Informer        // all nodes, into the cache
	namespaceInformer *client.Informer        // namespaces' labels, for InterPodAffinity's namespaceSelector
	serviceInformer   *client.Informer        // Services' selectors, for PodTopologySpread (New also starts ReplicaSets', ReplicationControllers')
	pdbInformer       *client.Informer        // PodDisruptionBudgets, which preemption prefers not to violate
	storage           storageLister           // claims, volumes, classes and CSINodes, for the volume plugins (storage_listers.go)

	// Owned by the scheduling loop (scheduleOne) alone.
	snapshot                 *cache.Snapshot
	percentageOfNodesToScore int32
	nextStartNodeIndex       int        // where the next cycle starts filtering
	rand                     *rand.Rand // breaks ties between best nodes

	// apiSlots is a semaphore of maxConcurrentAPICalls: a binding or status
	// goroutine sends to take a slot and receives to give it back.
	apiSlots chan struct{}
	// apiCalls counts those goroutines; Run waits for them before it returns.
	apiCalls sync.WaitGroup
}

// New builds a scheduler and registers its informer handlers; Run starts it.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Client == nil {
		return nil, errors.New("scheduler: Config.Client is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = corev1.DefaultSchedulerName
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if cfg.PercentageOfNodesToScore < 0 || cfg.PercentageOfNodesToScore > 100 {
		return nil, fmt.Errorf("scheduler: PercentageOfNodesToScore %d is not in [0, 100]", cfg.PercentageOfNodesToScore)
	}
	informers := client.NewSharedInformers(cfg.Client, cfg.Log)
	namespaceInformer, serviceInformer := informers.For(client.Namespaces), informers.For(client.Services)
	serviceInformer.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	// ReplicaSets and ReplicationControllers: PodTopologySpread's default
	// constraints spread the pods their selectors select.
	rsInformer, rcInformer := informers.For(client.ReplicaSets), informers.For(client.ReplicationControllers)
	// Claims, volumes and classes: the volume plugins check a pod's claims
	// against them, and VolumeBinding writes its choices through the client.
	// CSINodes: the nodes' volume limits, for NodeVolumeLimits.
	storage := newStorageLister(informers)
	if cfg.Plugins == nil {
		handle := framework.Handle{Namespaces: namespaceLister{namespaceInformer.Cache()}, Services: serviceLister{serviceInformer.Cache()},
			ReplicaSets: replicaSetLister{rsInformer.Cache()}, ReplicationControllers: replicationControllerLister{rcInformer.Cache()},
			Storage: storage, StorageWriter: storageWriter{cfg.Client}, Clock: cfg.Clock, CSINodes: storage}
		specs, err := plugins.NewProfile(cfg.Profile, handle)
		if err != nil {
			return nil, fmt.Errorf("scheduler profile: %w", err)
		}
		cfg.Plugins = specs
	}
	fwk, err := framework.New(cfg.Plugins...)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{
		client:    cfg.Client,
		log:       cfg.Log,
		name:      cfg.SchedulerName,
		clock:     cfg.Clock,
		metrics:   cfg.Metrics,
		steps:     cfg.Steps,
		recorder:  record.New(cfg.Client, cfg.SchedulerName, "", cfg.Log),
		framework: fwk,
		queue: queue.New(queue.Options{
			Clock:                             cfg.Clock,
			PodInitialBackoff:                 cfg.PodInitialBackoff,
			PodMaxBackoff:                     cfg.PodMaxBackoff,
			PodMaxInUnschedulablePodsDuration: cfg.PodMaxInUnschedulablePodsDuration,
			PluginEvents:                      fwk.EventsToRegister(),
		}),
		cache:                    cache.New(),
		snapshot:                 cache.NewEmptySnapshot(),
		percentageOfNodesToScore: cfg.PercentageOfNodesToScore,
		rand:                     cfg.Rand,
		apiSlots:                 make(chan struct{}, maxConcurrentAPICalls),
		informers:                informers,
		namespaceInformer:        namespaceInformer,
		serviceInformer:          serviceInformer,
		storage:                  storage,
	}
	// Step 9: "the scheduler watches the API server". Kubernetes'
	// scheduler watches all unfinished pods, all nodes, namespaces,
	// Services, ReplicaSets and ReplicationControllers (for spreading) and
	// the PodDisruptionBudgets (for preemption).
	s.podInformer = informers.ForSelection(client.Pods, "", client.ListOptions{FieldSelector: podInformerSelector})
	s.nodeInformer = informers.For(client.Nodes)
	s.pdbInformer = informers.For(client.PodDisruptionBudgets)
	if cfg.Profile.Preemption() { // nil Profile: the defaults, with preemption
		s.preemption = preemption.New(fwk, pdbLister{s.pdbInformer.Cache()}, cfg.Rand)
	}
	s.addEventHandlers()
	cfg.Metrics.WatchPending(func() metrics.PendingCounts {
		n := s.queue.Counts() // mkube's queue has no scheduling gates: gated is 0
		return metrics.PendingCounts{Active: n.Active, Backoff: n.Backoff, Unschedulable: n.Unschedulable}
	})
	return s, nil
}

// Start starts the event recorder and the node, pod, namespace, Service,
// ReplicaSet, ReplicationController and PodDisruptionBudget informers,
// and those of claims, volumes, classes and CSINodes, until ctx ends, and
// waits until they have listed once, so that the first decision sees
// every node, every bound pod, every namespace's labels, every Service
// and every budget. It reports whether they did (false: ctx ended first).
//
// A standby scheduler calls it before it leads, as kube-scheduler starts
// its informers before its leader election: the handlers only fill the
// queue and the cache (they write nothing), and the new leader schedules
// from a warm cache the moment it takes the Lease. Run calls it if
// nobody has; a second call only waits for the sync.
func (s *Scheduler) Start(ctx context.Context) bool {
	s.startOnce.Do(func() {
		go s.recorder.Run(ctx)
		go s.informers.Run(ctx)
	})
	return s.informers.WaitForSync(ctx)
}

// Run schedules pods until ctx is cancelled:
//
//  1. Start, unless the caller has: the recorder and informers, then
//     their first list;
//  2. start the queue's timers (backoff, unschedulable leftovers);
//  3. run scheduling cycles one after another on this goroutine;
//
// and on cancel: close the queue (which ends the loop), then wait for the
// bindings and status updates still in flight.
//
// Goroutines: the recorder, the seven informers and the queue's timers stop
// with ctx (the recorder and informers with Start's, if it was called
// first); one more goroutine waits for ctx to close the queue; the API
// calls (goAPI) are awaited before Run returns.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.Start(ctx) {
		return ctx.Err()
	}
	filters, scores := s.framework.ListPlugins()
	s.log.Info("scheduler ready", "scheduler", s.name, "nodes", s.cache.NodeCount(), "queued", s.queue.Counts().Active,
		"filters", strings.Join(filters, ","), "scores", strings.Join(scores, ","))
	go s.queue.Run(ctx)
	go func() {
		<-ctx.Done()
		s.queue.Close()
	}()
	for s.scheduleOne(ctx) {
	}
	s.apiCalls.Wait()
	return nil
}

// HasSynced reports whether the scheduler's informers have listed once:
// kube-scheduler's readyz check sched-handler-sync.
func (s *Scheduler) HasSynced() bool { return s.informers.HasSynced() }

// goAPI runs call on a goroutine of its own once an API slot is free, so
// the scheduling loop never waits on an HTTP round trip. If ctx ends
// before a slot frees up, call is dropped: the process is stopping.
func (s *Scheduler) goAPI(ctx context.Context, call func(ctx context.Context)) {
	s.apiCalls.Add(1)
	go func() {
		defer s.apiCalls.Done()
		select {
		case s.apiSlots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-s.apiSlots }()
		call(ctx)
	}()
}
