// Package pleg is the kubelet's pod lifecycle event generator
// (pkg/kubelet/pleg, evented_pleg.go there): how the kubelet learns that
// a container exited on its own, which no API object tells it. It is the
// nudge behind seed 000's step 12 for a pod whose container died: the
// pod is synced again, and the sync restarts the container.
//
// mkube's kubelet is the evented PLEG: it reads the runtime's
// GetContainerEvents stream and hands each event to the kubelet, which
// syncs the container's pod, where the real kubelet's default
// (generic.go) relists every container each second. Each sync then asks
// the runtime for the pod's state, so an event is only a nudge and a
// duplicate is harmless. When the stream breaks, the kubelet relists:
// every pod is synced once, and the stream is opened again after
// RetryPeriod.
//
// Where things live:
//
//	file      what it holds
//	pleg.go   the PLEG: Run reads the stream (it blocks), Handler is the kubelet's side
//	doc.go    this map
package pleg
