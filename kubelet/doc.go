// Package kubelet is mkube's fake kubelet: the node agent of seed 000,
// steps 12 and 13, without real containers.
//
// A Kubelet pretends to be one node:
//
//   - It registers a Node (capacity, labels, taints, addresses, podCIDR,
//     Ready=True) and keeps it alive with two heartbeats, as real kubelets
//     do: the node status every StatusInterval (node.go, nodestatus.go), and
//     a Lease in kube-node-lease, which is cheaper to write (lease.go).
//   - Step 12: it list-watches the pods whose spec.nodeName is its own
//     (fieldSelector spec.nodeName=NAME), queues their keys, and syncs each
//     pod (pods.go): report ContainerCreating, RunPodSandbox (the pod's
//     IP), per container ImageStatus and PullImage (Pulling/Pulled events),
//     CreateContainer and StartContainer (Created/Started events)
//     (containers.go, images.go, criconfig.go).
//   - Step 13: it reports the resulting status, Running with a pod IP and
//     ready containers, with PUT pods/NAME/status, which the API server
//     stores in etcd (runtimepod.go asks the runtime, podstatus.go
//     computes the status, statusmanager.go writes it).
//   - It finishes graceful deletion: when `kubectl delete` sets a pod's
//     deletionTimestamp, it stops the containers with the grace period
//     (Killing events), reports them terminated, deletes the pod with
//     gracePeriodSeconds=0, then StopPodSandbox and RemovePodSandbox.
//   - `kubectl logs` reaches its API (server.go), which reads the CRI log
//     files the runtime writes under --pod-logs-dir (containerlog.go).
//   - Besides its image and volumes, it gives each container what a real
//     kubelet does: the pod's /etc/hosts (etchosts.go) and DNS
//     (dns.go), a termination-log file it reads back into the status
//     (terminationmessage.go), the user and privileges of its
//     securityContext (securitycontext.go), its lifecycle hooks
//     (lifecyclehooks.go), image volumes (imagevolumes.go) and ephemeral
//     containers (ephemeral.go).
//   - After a restart it takes back the pods it ran (restore.go), so they
//     stay Running untouched.
//
// The containers live in a container runtime that the kubelet reaches
// over the real CRI, gRPC on a unix socket (runtime.go): an external
// bin/runtime given by --container-runtime-endpoint, or by default the
// same runtime (package cri) started in the kubelet's process on a
// private socket. The kubelet keeps no container state of its own; it
// finds each pod's sandbox and containers by the labels it put on them
// (io.kubernetes.pod.uid, io.kubernetes.container.name, ...), so
// `crictl ps --label io.kubernetes.pod.name=web` shows them too. The
// containers run until stopped: they never exit, crash or fail probes on
// their own, so restart policies only matter when a pod is deleted.
//
// Log lines of the kubelet acting carry step=12; those of a status it
// reported carry step=13, next to the API server's step=13 line for the
// same write.
package kubelet
