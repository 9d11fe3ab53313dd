// Package cri is mkube's container runtime, its containerd: it serves
// Kubernetes' Container Runtime Interface v1 (RuntimeService and
// ImageService from k8s.io/cri-api/pkg/apis/runtime/v1) over gRPC on a unix
// socket.
//
// Step 12 of the pod creation flow has the kubelet "call Docker to start
// the containers". On a real node that call is CRI: the kubelet asks the
// runtime to RunPodSandbox (the pod's network namespace and IP), to
// PullImage, then to CreateContainer and StartContainer for each container,
// and later to StopContainer, RemoveContainer, StopPodSandbox and
// RemovePodSandbox. The real crictl speaks the same protocol, so a learner
// can drive this runtime by hand:
//
//	runtime --listen unix:///tmp/mkube/runtime.sock &
//	crictl --runtime-endpoint unix:///tmp/mkube/runtime.sock pull nginx:1.25
//	crictl --runtime-endpoint unix:///tmp/mkube/runtime.sock runp pod.json
//
// The records live in memory; the containers run. A sandbox is a record
// with an IP on the pod network. An image is a name the runtime pulls
// (taking Options.ImagePullDelay) and looks up in the image catalog, which
// says what its real namesake holds: ENTRYPOINT and CMD, files, programs.
// A started container runs its command line (Kubernetes' command/args
// rule over the image's) in a simulated shell, over an in-memory
// filesystem with its volumes mounted from the node's directory: it
// prints to its CRI log file, sleeps, serves its ports, uses memory up to
// its limit (an OOM kill above it), and exits on its own with a code, or
// crashes, or is stopped with its image's stop signal and killed when the
// grace period runs out. The kubelet sees the exit as a
// CONTAINER_STOPPED event and restarts the container by the pod's
// restartPolicy. Those programs are scenery (package images and below,
// which the runtime's process side reaches through package images
// alone); where CRI leaves a choice, the runtime does what containerd
// does, and the comment says so.
//
// A container's CPU is accounted, not measured: its programs say what
// they would use (a shell loop that never blocks, `yes > /dev/null` or
// stress --cpu a core each; a request to nginx, agnhost or hpa-example
// its handler's CPU time; resource-consumer what it is asked), and its
// cgroup's accounting (images.CPU) integrates that over the runtime's
// clock, capped by the CFS quota from its cpu limit, counting throttled
// periods as cgroup v2's cpu.stat does. Simulated time rather than the
// host's cycles, because a thousand simulated containers share a few
// real cores: a busy loop is paced to a wait of the clock per thousand
// commands and costs the host about 2.4% of a core (measured with
// images/shell's BenchmarkBusyLoopHostCost: 0.19 CPU-seconds of the host
// for 8 s of a busy loop accounted as 8 CPU-seconds), yet shows a full core
// in `crictl stats`, in the kubelet's stats and to the HPA, and a test
// with a fake clock gets exact numbers. An idle container still uses a
// few microcores, never exactly 0 (metrics-server drops a pod whose
// cumulative CPU is 0).
//
// Where things live, by CRI's families of calls:
//
//	file               what it holds
//	server.go          Server and Options: the state under one lock, and
//	                   the gRPC server of CRI, mkube's Faults service and
//	                   the pod network's service on one socket
//	listen.go          the unix socket (Listen), a stale one removed
//	inprocess.go       InProcess: the runtime a kubelet runs inside itself
//	                   on a private socket, and the Restore calls that
//	                   rebuild its records when that kubelet restarts
//	status.go          Version, Status, RuntimeConfig: the runtime-wide calls
//	runtimehandlers.go the RuntimeClass handlers RunPodSandbox accepts
//
//	sandboxes.go       RunPodSandbox, StopPodSandbox, RemovePodSandbox,
//	                   PodSandboxStatus, ListPodSandbox
//	sysctls.go         a sandbox's /proc/sys: the pod's safe sysctls
//
//	images.go          PullImage, ListImages, ImageStatus, RemoveImage,
//	                   ImageFsInfo: the pulled-image records (ID, size)
//	reference.go       image names normalized as containerd's are
//	imagevolumes.go    an image mounted as a volume (read-only)
//
//	containers.go      CreateContainer, StartContainer, StopContainer,
//	                   RemoveContainer, ListContainers, ContainerStatus,
//	                   ReopenContainerLog
//	process.go         what a started container does: its command line,
//	                   filesystem and environment, its process run to its
//	                   exit, the stop with a grace period, the kill
//	identity.go        who its process runs as (runAsUser, runAsGroup,
//	                   supplementalGroups, the image's /etc/passwd)
//	volumes.go         its mounts: the node's directories, bind-mounted
//	boundfile.go       a single file bound (/etc/hosts, termination-log,
//	                   a ConfigMap key's subPath)
//	tmpfs.go           the memory-backed mounts (emptyDir medium Memory),
//	tmpfs_stat.go      and their files' modes and filesystem type
//	cgroups.go         UpdateContainerResources, and the container's
//	                   /sys/fs/cgroup (cpu.max, cpu.stat...), memory
//	                   limit and CPU accounting
//	logs.go            its CRI log file, in the CRI logging format
//	stats.go           ContainerStats, ListContainerStats: CPU (cumulative
//	                   and its rate), memory and the writable layer
//	sandboxstats.go    PodSandboxStats, ListPodSandboxStats: a pod's CPU
//	                   and memory, its containers' added up
//	events.go          GetContainerEvents, the evented PLEG's stream
//
//	exec.go            ExecSync: a command beside the main process (exec
//	                   probes, preStop hooks)
//	streaming.go       Exec, Attach, PortForward and the streaming server
//	                   kubectl exec, attach and port-forward reach
//	attach.go          the main process's stdio and tty for kubectl attach
//
//	faults.go          mkube's Faults service: inspect a process; crash,
//	                   OOM-kill, fail probes, freeze the runtime on purpose
//	index.go           the records' indexes (by pod, by sandbox)
//	ids.go             IDs, lookup by ID prefix, label selectors
//	network.go         the runtime's side of the pod network: the
//	                   PodNetwork service (routes, Service rules, dials)
//	                   the kubelet calls, the sandboxes network/podnetwork
//	                   sees, each process's way out and its nameserver
//	dns.go             a container's /etc/resolv.conf, its sandbox's
//	doc.go             this map
//
// The pod network (package network/...) is the runtime's other half, as a
// CNI plugin and kube-proxy are containerd's neighbours on a real node: it
// gives each sandbox its IP and /etc/resolv.conf, carries connections and
// datagrams to a pod's IP (a probe, a port-forward, another pod, a
// hostPort, a Service's virtual IP by kube-proxy's rules, a pod on another
// node through its runtime), and answers the cluster's DNS. What answers
// at the end of a connection is the container's image, through its Serve.
package cri
