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
//     podCIDR, Ready=True), its CSINode and its Lease (node.go,
//     csinode.go, kubelet/nodelease); then two heartbeats, the node status every
//     StatusInterval and the cheaper Lease (nodestatus.go, remembering
//     between beats in kubelet/nodestatus).
//  2. Pod sources: the API server's pods bound to the node, list-watched
//     with fieldSelector spec.nodeName=NAME and queued by key (fleet.go,
//     pods.go); the static pods of --pod-manifest-path, with their mirror
//     pods (staticpods.go, remembered in kubelet/config). Step 12 begins.
//  3. Admission: kubelet/lifecycle lets the pod in or rejects it
//     (sysctls, resources, affinity, host ports, taints), and keeps the
//     resources allocated to it (in-place resize).
//  4. Pod sync (pods.go → containers.go runPod): the sandbox and its IP
//     (kubelet/kuberuntime, wired in runtimemanager.go); volumes
//     (volumes.go, volumes_claims.go, volumesources.go, subpath.go;
//     their paths, emptyDirs, atomic writes
//     and memory in kubelet/volumemanager), with the service-account
//     tokens of kubelet/token and the certificates of kubelet/clustertrustbundle
//     and podcertificates.go); per container its image (kubelet/images),
//     its environment (envvars.go, expansion.go), /etc/hosts and DNS
//     (etchosts.go, dns.go), CreateContainer and StartContainer with the
//     configs of kubelet/kuberuntime, its postStart hook (kubelet/kuberuntime);
//     then its probes (probes.go, run by kubelet/prober).
//  5. Status, step 13: kubelet/status computes the pod's status from
//     the runtime's view of it (kubelet/container, read by
//     kubelet/kuberuntime's PodReader) and writes it with PUT
//     pods/NAME/status (podstatus.go assembles it).
//  6. Container events: kubelet/pleg follows the runtime's container
//     events and syncs the pod of a container that started or died
//     (fleet_pleg.go).
//  7. Limits: an active deadline (deadline.go) or the eviction manager
//     (eviction.go, eviction_usage.go) fail the pod; kubelet/status keeps
//     that verdict.
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
//	config              config                      the static pods read, their mirrors' UIDs, mirrors deleted (its own lock)
//	container           container (kubecontainer)   the runtime's view of a pod: sandbox, container instances
//	types               types (kubetypes)           mirror annotations, RuntimeUID, sidecars, PodGVK
//	lifecycle           lifecycle, allocation       admission and the allocated resources (its own locks)
//	images              images                      pulls, pull policy, pull back-off and errors (its own lock)
//	backoff             (flowcontrol.Backoff)       the crash-loop and image-pull delays
//	prober              prober                      one worker per probe, their results
//	status              status                      step 13's writes, and the failures the kubelet decided
//	pleg                pleg                        the runtime's container events
//	clustertrustbundle  clustertrustbundle          clusterTrustBundle projected sources, from an informer
//	nodelease           nodelease                   the node's Lease in kube-node-lease, the cheap heartbeat
//	nodestatus          nodestatus                  the node status heartbeat's memory: last status written, runtime, memory stats (its own lock)
//	token               token                       the pods' service-account tokens, cached and renewed (its own lock)
//	volumemanager       volumemanager               volume paths, emptyDirs, atomic writes; pods whose volumes were set up (its own lock)
//	server              server                      the kubelet's HTTP API: logs, exec, attach, port-forward, faults
//	kuberuntime         kuberuntime, lifecycle      a pod's spec as CRI calls: sandbox, configs, create, start, hooks, stop; pods read back by labels
//
// # Where things live in this package
//
//	file                     what it holds
//	kubelet.go               Config, the Kubelet: its managers, wired; register and run
//	fleet.go                 the Fleet, a process's nodes and what they share (informers, runtime, port)
//	fleet_pleg.go            the fleet's side of the PLEG: an event syncs its pod, on its node
//	fleet_server.go          the fleet's side of the HTTP API (server.Host)
//	identity.go              who the kubelet is to the API server; each node's requests as that node
//	options.go               command-line values turned into Config (capacity, node IPs)
//	runtime.go               the CRI connection (in-process or --container-runtime-endpoint)
//	runtimemanager.go        the Kubelet's side of kubelet/kuberuntime: the labels, the CRI configs with this package's helpers
//	node.go                  registering the Node
//	nodestatus.go            the node status heartbeat, runtime health, memory pressure, images
//	csinode.go               the node's CSINode (volume limits)
//	pods.go                  syncPod: the action for a pod (run, terminate, release), forgetPod
//	containers.go            runPod and syncContainer: sandbox, init containers, containers, restarts (kubelet/kuberuntime runs them)
//	termination.go           stopping a pod's containers, in the background, and deleting it
//	ephemeral.go             ephemeral containers (`kubectl debug`)
//	deadline.go              activeDeadlineSeconds: failing a pod that outlived it
//	eviction.go              the eviction manager: local storage over its limits
//	eviction_usage.go        what the eviction manager measures of a pod's local storage
//	admission.go             the node admission judges against; writing a rejection
//	resize.go                in-place resize: actuating allocated resources, status.resources
//	podstatus.go             reportStatus: the pod's status assembled, written by kubelet/status
//	probes.go                how a probe runs (exec, httpGet, tcpSocket) and what its result does
//	probes_grpc.go           grpc probes
//	downwardapi.go           the downward API's values: fieldRef and resourceFieldRef
//	envvars.go               a container's environment: env, envFrom, service variables
//	expansion.go             $(VAR) expansion in env, command and args
//	etchosts.go              the kubelet-managed /etc/hosts
//	dns.go                   a pod's resolv.conf: the flags handed to network/dns's Configurer
//	objects.go               the ConfigMaps and Secrets containers see, and which changed
//	volumes.go               setting up and tearing down a pod's volumes, their resync
//	volumes_claims.go        persistentVolumeClaim volumes: attach, Multi-Attach, nfs
//	volumesources.go         what configMap, secret, downwardAPI and projected volumes hold
//	subpath.go               volume subPaths
//	imagevolumes.go          image volumes, and ensureImage (kubelet/images, queued)
//	podcertificates.go       podCertificate projected sources: keys, requests, refresh
//	podcertificates_node.go  their keys and the node's part in their requests
//	restore.go               taking back the pods of an earlier kubelet after a restart
//	staticpods.go            static pods and their mirror pods
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
