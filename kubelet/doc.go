// Package kubelet is mkube's kubelet: the node agent of seed 000, steps
// 12 and 13, with containers in a CRI runtime (package cri) rather than
// real ones. Like the real kubelet it is a set of managers, sub-packages
// named after pkg/kubelet/...; this package constructs them, connects
// them, and holds the pod sync that calls them in order.
//
// # A pod's way through the kubelet
//
// In the order a pod meets them:
//
//  1. Registration: the Node (capacity, labels, taints, addresses,
//     podCIDR, Ready=True), its CSINode and its Lease (kubelet/nodestatus,
//     kubelet/nodelease); then two heartbeats, the node status every
//     StatusInterval and the cheaper Lease (kubelet/nodestatus).
//  2. Pod sources: the API server's pods bound to the node, list-watched
//     with fieldSelector spec.nodeName=NAME and queued by key (fleet.go,
//     pods.go); the static pods of --pod-manifest-path, with their mirror
//     pods (kubelet/config). Step 12 begins.
//  3. Admission: kubelet/lifecycle lets the pod in or rejects it
//     (sysctls, resources, affinity, host ports, taints), and keeps the
//     resources allocated to it (in-place resize).
//  4. Pod sync (pods.go → containers.go runPod): the sandbox and its IP
//     (kubelet/kuberuntime, its CRI configs built in managers.go);
//     volumes, set up by kubelet/volumemanager (wired in volumes.go,
//     reading payloads through volumesources.go), with the service-account tokens of
//     kubelet/token and the certificates of kubelet/clustertrustbundle
//     and kubelet/podcertificate; per container its image
//     (kubelet/images), its environment (kubelet/envvars), /etc/hosts
//     and DNS (etchosts.go, dns.go), CreateContainer and StartContainer
//     with the configs of kubelet/kuberuntime, its postStart hook
//     (kubelet/kuberuntime); then its probes (kubelet/prober).
//  5. Status, step 13: kubelet/status computes the pod's status from
//     the runtime's view of it (kubelet/container, read by
//     kubelet/kuberuntime's PodReader) and writes it with PUT
//     pods/NAME/status (podstatus.go assembles it).
//  6. Container events: kubelet/pleg follows the runtime's container
//     events and syncs the pod of a container that started or died
//     (fleet_pleg.go).
//  7. Limits: an active deadline (deadline.go) or the eviction manager
//     (kubelet/eviction) fail the pod; kubelet/status keeps that verdict.
//  8. Termination: a deletion stops the containers with their grace
//     period, preStop hooks first (termination.go, kubelet/kuberuntime),
//     reports them, deletes the pod, then StopPodSandbox and
//     RemovePodSandbox (pods.go forgetPod).
//
// # Where a crashed container is restarted
//
// In containers.go, syncContainer: a container the runtime reports
// exited is restarted there if its restart policy says so
// (restartPolicyOf, shouldRestart), after the crash-loop back-off of
// kubelet/backoff ("container exited: restarting it as its restart
// policy says"; CrashLoopBackOff while it waits). The sync that gets
// there is the one kubelet/pleg asks for when the container died.
//
// # The sub-packages
//
//	package             upstream (pkg/kubelet/...)  what it owns
//	config              config, pod (mirror client) the static pods: manifests read, synced with their mirrors, mirrors' UIDs (its own lock)
//	container           container (kubecontainer)   the runtime's view of a pod: sandbox, container instances
//	types               types (kubetypes)           mirror annotations, RuntimeUID, sidecars, PodGVK
//	lifecycle           lifecycle, allocation       admission and the allocated resources (its own locks)
//	images              images                      pulls, pull policy, pull back-off and errors (its own lock)
//	backoff             (flowcontrol.Backoff)       the crash-loop and image-pull delays
//	prober              prober                      one worker per probe, how a probe runs (exec, httpGet, tcpSocket, grpc), what its result does
//	status              status                      step 13's writes, and the failures the kubelet decided
//	eviction            eviction                    the eviction manager: pods' local storage measured, those over a limit evicted
//	pleg                pleg                        the runtime's container events
//	clustertrustbundle  clustertrustbundle          clusterTrustBundle projected sources, from an informer
//	envvars             envvars (kubelet_pods.go)   a container's environment: env, envFrom, service variables, $(VAR); CreateContainerConfigError
//	podcertificate      podcertificate              podCertificate projected sources: keys, requests as the node, refresh (its own lock)
//	nodelease           nodelease                   the node's Lease in kube-node-lease, the cheap heartbeat
//	nodestatus          nodestatus                  registering the Node (kubelet_node_status.go), its CSINode, the status heartbeat and its memory (its own lock)
//	token               token                       the pods' service-account tokens, cached and renewed (its own lock)
//	volumemanager       volumemanager               setting up and tearing down pods' volumes: claims, payloads, subPaths, image volumes (its own lock)
//	server              server                      the kubelet's HTTP API: logs, exec, attach, port-forward, faults; which node a /stats or /metrics request is for
//	kuberuntime         kuberuntime, lifecycle      a pod's spec as CRI calls: sandbox, configs, create, start, hooks, stop; pods read back by labels
//	stats               stats, server/stats         a node's usage from the CRI (cpu, memory, disk), rates; GET /stats/summary
//	metrics             metrics, metrics/collectors /metrics/resource, /metrics/cadvisor, /metrics/probes, /metrics: a registry per path per node
//
// And internal/kubelettest, with no upstream counterpart: the test
// fixtures (pods, resource lists) that the tests of this package and of
// its sub-packages share.
//
// # Where things live in this package
//
//	file                     what it holds
//	kubelet.go               Config, the Kubelet: its managers, wired; register and run
//	managers.go              the CRI configs (kubelet/kuberuntime) and the node status, eviction, static pod and metrics managers, given the Kubelet's parts
//	fleet.go                 the Fleet, a process's nodes and what they share (informers, runtime, port)
//	fleet_pleg.go            the fleet's side of the PLEG: an event syncs its pod, on its node
//	fleet_server.go          the fleet's side of the HTTP API (server.Host): pods, runtime, each node's stats and metrics
//	identity.go              who the kubelet is to the API server; each node's requests as that node
//	options.go               command-line values turned into Config (labels, taints, capacity, node IPs and pod CIDRs)
//	runtime.go               the CRI connection (in-process or --container-runtime-endpoint), pods read back, probe faults
//	pods.go                  syncPod: the action for a pod (run, terminate, release); forgetPod, releasePod
//	containers.go            runPod and syncContainer: sandbox, init containers, containers, restarts (kubelet/kuberuntime runs them)
//	termination.go           stopping a pod's containers, in the background, and deleting it
//	ephemeral.go             ephemeral containers (`kubectl debug`)
//	deadline.go              activeDeadlineSeconds: failing a pod that outlived it, a failed pod's grace period
//	admission.go             the node admission judges against (kubelet/lifecycle); writing a rejection
//	resize.go                in-place resize: actuating allocated resources, status.resources
//	podstatus.go             reportStatus: the pod's status assembled, written by kubelet/status
//	downwardapi.go           the downward API's values: fieldRef and resourceFieldRef
//	etchosts.go              the kubelet-managed /etc/hosts, the pod's hostname, the node's own /etc files
//	dns.go                   a pod's resolv.conf: the flags handed to network/dns's Configurer
//	objects.go               the ConfigMaps and Secrets containers see, and which changed
//	volumes.go               the volume manager wired (kubelet/volumemanager), CRI mounts, the volumes' resync
//	volumesources.go         where the volume manager reads configMap, secret, downwardAPI and projected volumes
//	subpath.go               volume subPaths: subPathExpr expanded
//	imagevolumes.go          image volumes' CRI mounts, and ensureImage (kubelet/images, queued)
//	restore.go               taking back the pods of an earlier kubelet after a restart
//	podnetwork.go            dialing a pod's IP through the runtime
//	podnetwork_route.go      the control plane's route to the pod network
//	doc.go                   this map
//
// The pod network's node daemons are not the kubelet's: the routes to the
// other nodes' pods (flannel's job) and the Service rules (kube-proxy's)
// live in network/podnetwork and network/proxy; fleet.go only starts them.
//
// The kubelet keeps no container state of its own: it finds each pod's
// sandbox and containers in the runtime by the labels it put on them
// (io.kubernetes.pod.uid, io.kubernetes.container.name, ...), so
// `crictl ps --label io.kubernetes.pod.name=web` shows them too.
// Containers exit, crash, are OOM-killed or fail probes on their own (or
// by mkube's fault injection, kubelet/server); the kubelet restarts them
// as their restart policy says.
//
// Log lines of the kubelet acting carry step=12; those of a status it
// reported carry step=13, next to the API server's step=13 line for the
// same write.
package kubelet
