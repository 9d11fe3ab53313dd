// Package prober is the kubelet's prober (pkg/kubelet/prober): one
// worker per probe of each running container, each probing on its own
// period and turning the runs into a result by the probe's thresholds.
//
//   - A liveness probe's failure kills the container, which then restarts
//     as its restart policy says.
//   - A readiness probe's result is the container's `ready`, and so the
//     pod's Ready condition and whether its IP is in its Services'
//     Endpoints addresses or notReadyAddresses.
//   - A startup probe holds the other two until it succeeds once; its
//     failure kills the container, as liveness does.
//
// The Manager schedules probes and keeps their results (upstream
// prober_manager.go and worker.go); the Prober runs them (prober.go: an
// exec in the container, an HTTP GET, a TCP connect or a gRPC health
// Check to the pod's IP) and acts on their results: an Unhealthy event
// for a failed run, a failed liveness or startup probe's container
// killed, the pod synced again when a result changes. What they need of
// the kubelet (its runtime, the pod network, killing a container, its
// queue, its recorder) is passed in as fields.
//
// Probes keep a running pod of seed 000's step 12 honest: a liveness
// failure is one way a container comes to be restarted, and readiness
// decides the Ready condition step 13 reports.
//
// Where things live:
//
//	file             what it holds
//	manager.go       the Manager: a worker per probe, started and stopped with the containers (SyncSandbox), and their results (UpdatePodStatus)
//	worker.go        one probe's worker: its period, thresholds and result
//	prober.go        the Prober, the Runner: exec, httpGet and tcpSocket probes; HTTPClient, Port, MaxBody for httpGet hooks too
//	prober_grpc.go   grpc probes
//	results.go       what a result does: the Unhealthy event, the kill of a failed liveness or startup probe, the pod's resync
//	doc.go           this map
package prober
