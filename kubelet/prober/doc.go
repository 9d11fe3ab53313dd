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
// The package only schedules probes and keeps their results: how a probe
// runs (an exec in the container, an HTTP GET or a TCP connect to the
// pod's IP) is the kubelet's Runner, and what a result means for the
// container is the kubelet's OnChange.
//
// Probes keep a running pod of seed 000's step 12 honest: a liveness
// failure is one way a container comes to be restarted, and readiness
// decides the Ready condition step 13 reports.
//
// Where things live:
//
//	file         what it holds
//	manager.go   the Manager: a worker per probe, started and stopped with the containers, and their results
//	worker.go    one probe's worker: its period, thresholds and result
//	doc.go       this map
package prober
