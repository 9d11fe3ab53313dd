package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/kubelet/config"
	"github.com/mkube/mkube/kubelet/envvars"
	"github.com/mkube/mkube/kubelet/eviction"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	kubeletmetrics "github.com/mkube/mkube/kubelet/metrics"
	"github.com/mkube/mkube/kubelet/nodestatus"
	"github.com/mkube/mkube/kubelet/server"
	"github.com/mkube/mkube/kubelet/stats"
)

// The managers that act through the Kubelet's own pod worker, runtime
// and labels are given them here, as func fields and small interfaces:
// they cannot import this package.

// criConfigs builds the CRI configs of the sandboxes and containers of
// a node whose runtime writes the logs in podLogsDir, with this
// package's hostname (etchosts.go) and volume mounts (volumes.go), and
// package envvars' $(VAR) expansion of command and args. A container's
// config names no log directory: only its sandbox's does.
func criConfigs(podLogsDir string) kuberuntime.Configs {
	return kuberuntime.Configs{PodLogsDir: podLogsDir, Hostname: podHostname,
		ExpandArgs: envvars.ExpandArgs, VolumeMounts: volumeMounts}
}

// newEvictionManager is k's eviction manager, which finds a pod's
// containers in the runtime by kubelet/kuberuntime's labels, on k's
// node.
func newEvictionManager(k *Kubelet) *eviction.Manager {
	o := eviction.Options{Runtime: k.runtime.runtime, ContainerLabel: kuberuntime.LabelContainerName,
		Selector: func(pod *corev1.Pod) map[string]string {
			return map[string]string{kuberuntime.LabelPodUID: string(pod.UID), kuberuntime.LabelNodeName: k.cfg.NodeName}
		},
		LogDir:   func(pod *corev1.Pod) string { return kuberuntime.PodLogDirectory(k.cfg.PodLogsDir, pod) },
		Failures: k.status, Recorder: k.recorder, Enqueue: k.queue.Add, Log: k.log}
	if k.cfg.NodeRoot != "" {
		o.OnDisk = k.volumes.OnDisk
	}
	return eviction.NewManager(o)
}

// newStaticPodManager is k's static pod manager: a static pod goes
// through k's pod worker as any pod, under its hash's UID.
func newStaticPodManager(k *Kubelet) *config.Manager {
	return config.NewManager(config.Options{NodeName: k.cfg.NodeName, ManifestPath: k.cfg.PodManifestPath,
		FileCheckFrequency: k.cfg.FileCheckFrequency, Pods: &k.static, Client: k.client,
		Node: k.nodeStatus.Node,
		Mirror: func(key string) (*corev1.Pod, bool) {
			obj, ok := k.informer.Cache().Get(key)
			if !ok {
				return nil, false
			}
			return obj.(*corev1.Pod), true
		},
		Queue: k.queue, Stopping: k.terminating.busy, InBackground: k.inBackground,
		StopContainers: func(ctx context.Context, pod *corev1.Pod) error {
			sb, err := k.runtime.podSandbox(ctx, pod.UID)
			if err != nil || sb == nil {
				return err
			}
			return k.stopContainers(ctx, pod, sb, kuberuntime.GracePeriod(pod.Spec.TerminationGracePeriodSeconds))
		},
		ForgetPod: k.forgetPod, ReleasePod: k.releasePod, RunPod: k.runPod, Clock: k.clock, Log: k.log})
}

// newMetricsEndpoints are k's stats and metrics (kubelet/stats,
// kubelet/metrics): its pods' usage from the runtime, its own metrics.
func newMetricsEndpoints(k *Kubelet) *kubeletmetrics.Endpoints {
	cfg := k.cfg
	return kubeletmetrics.NewEndpoints(kubeletmetrics.Options{Node: cfg.NodeName, MachineID: nodestatus.MachineID(cfg.NodeName),
		Stats: stats.Options{Node: cfg.NodeName, Runtime: k.runtime.runtime, Selector: map[string]string{kuberuntime.LabelNodeName: cfg.NodeName},
			Pods: func() []*corev1.Pod { return k.fleet.podsOf(cfg.NodeName) }, Capacity: cfg.Capacity,
			Volumes: func(ctx context.Context, pod *corev1.Pod) map[string]int64 {
				u, _ := k.eviction.LocalStorageUsage(ctx, pod)
				return u.Volumes
			},
			StartTime: k.clock.Now(), Clock: k.clock},
		RuntimeOps: k.fleet.runtimeOps, Process: k.fleet.processMetrics, Clock: k.clock})
}

// nodeAnnotations are what k sets on its Node: a fleet's nodes share one
// port, so each names its own /metrics/resource (kubelet/server's
// stats.go) for metrics-server 0.7+, as KWOK's nodes do.
func nodeAnnotations(k *Kubelet) map[string]string {
	if len(k.fleet.names) == 1 {
		return nil
	}
	return map[string]string{resourceMetricsPathAnnotation: server.NodePath(k.cfg.NodeName, kubeletmetrics.PathMetricsResource)}
}

// resourceMetricsPathAnnotation is metrics-server's per-node override
// of the path it scrapes.
const resourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"

// newNodeStatusManager is k's node status manager: the node k's Config
// says it is, and k's runtime, images and lease.
func newNodeStatusManager(k *Kubelet) *nodestatus.Manager {
	cfg := k.cfg
	return nodestatus.NewManager(nodestatus.Options{
		Config: nodestatus.Config{NodeName: cfg.NodeName, NodeIP: cfg.NodeIP, PodCIDR: cfg.PodCIDR, Capacity: cfg.Capacity,
			Labels: cfg.Labels, Taints: cfg.Taints, MaxVolumes: cfg.MaxVolumes, Port: cfg.Port,
			StatusInterval: cfg.StatusInterval, NodeStatusReportFrequency: cfg.NodeStatusReportFrequency},
		Client: k.client, Recorder: k.recorder, Runtime: k.runtime.runtime,
		RuntimeVersion: k.runtime.version, PeerAddress: k.runtime.peerAddress, Annotations: nodeAnnotations(k),
		NodeContainers: map[string]string{kuberuntime.LabelNodeName: cfg.NodeName},
		Images:         k.fleet.nodeImages.List, RestoreImages: k.restoreImages,
		Lease: k.lease, Clock: k.clock, Log: k.log})
}
