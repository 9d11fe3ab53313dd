// Package status is the kubelet's status manager (pkg/kubelet/status,
// status_manager.go there, with generate.go's generateAPIPodStatus from
// kubelet_pods.go): seed 000's step 13, the pod's status computed from
// what the runtime has and written with PUT pods/NAME/status, which the
// API server stores in etcd. Its log lines carry step=13, next to the
// API server's step=13 line for the same write.
//
// The Manager owns the writes (with their retry on 409 Conflict) and the
// failures the kubelet decided itself (an active deadline that passed,
// an eviction), which make a pod Failed whatever its containers do. It
// has its own lock; the pod workers call it.
//
// Where things live:
//
//	file          what it holds
//	manager.go    the Manager: Report writes a status that changed, Fail/Failure keep the kubelet's own verdicts
//	generate.go   GeneratePodStatus: phase, conditions and container statuses from the runtime's view of the pod
//	doc.go        this map
package status
