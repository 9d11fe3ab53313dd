// Package seedstep names the 13 steps of seed 000's pod creation flow
// (section 一.2, "list-watch机制创建pod的流程"), so that the code carrying out
// a step says which one it is, and its log line carries step=N.
//
// README.md's table maps each step to the component, the function and the
// log line that shows it.
//
//	file         what it holds
//	seedstep.go  the steps' numbers and the log key
//	metrics.go   Durations: mkube_pod_step_duration_seconds{step}, time from a pod's creation to each step
package seedstep

// Key is the log attribute every step is tagged with: step=N.
const Key = "step"

// The steps, numbered as in the seed. They are untyped constants so that
// the log prints the number itself.
const (
	// 1. The controller manager, the scheduler and the kubelet list-watch
	// the API server from the moment they start.
	ComponentsListWatch = 1
	// 2. A user (kubectl or any client) asks the API server to create a pod.
	ClientSubmits = 2
	// 3. The API server stores the object in etcd, then acknowledges the client.
	StoredAndAcknowledged = 3
	// 4. etcd sends the create event to the API server.
	EtcdReportsCreate = 4
	// 5. The API server passes the event on to the controller manager's watch.
	ControllerManagerWatches = 5
	// 6. A replication controller sees too few replicas and creates pods.
	ControllerCreatesPods = 6
	// 7. The API server stores the pod the controller created.
	ControllerPodStored = 7
	// 8. etcd reports that pod to the API server.
	EtcdReportsControllerPod = 8
	// 9. The scheduler, watching for pods without a node, picks one.
	SchedulerPicksNode = 9
	// 10. The scheduler writes its decision (a binding) back through the API server.
	BindingStored = 10
	// 11. etcd reports the binding, and the API server passes it on.
	EtcdReportsBinding = 11
	// 12. The kubelet of that node sees the pod and starts its containers.
	KubeletStartsPod = 12
	// 13. The kubelet reports the pod's status; the API server stores it.
	PodStatusStored = 13
)
