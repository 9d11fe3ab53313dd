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
//     pod (pods.go): report ContainerCreating, create the pod sandbox and
//     its IP, pull each image (Pulling/Pulled events), create and start each
//     container (Created/Started events) (containers.go, images.go).
//   - Step 13: it reports the resulting status, Running with a pod IP and
//     ready containers, with PUT pods/NAME/status, which the API server
//     stores in etcd (podstatus.go computes it, statusmanager.go writes it).
//   - It finishes graceful deletion: when `kubectl delete` sets a pod's
//     deletionTimestamp, it stops the containers (Killing events), reports
//     them terminated, and deletes the pod with gracePeriodSeconds=0.
//   - After a restart it takes back the pods it ran, with their IPs, from
//     their reported status (restore.go), so they stay Running untouched.
//
// The containers themselves live in package fakeruntime, behind the calls
// a kubelet makes to a real runtime over the CRI. They run until stopped:
// fake containers never exit, crash or fail probes, so restart policies
// only matter when a pod is deleted.
//
// Log lines of the kubelet acting carry step=12; those of a status it
// reported carry step=13, next to the API server's step=13 line for the
// same write.
package kubelet
