// Package lifecycle is the kubelet's pod admission and resource
// allocation (pkg/kubelet/lifecycle's predicate.go and
// pkg/kubelet/allocation there): the gate of seed 000's step 12, where a
// pod new to the node is let in, or rejected, before its sandbox is made.
//
// The Admitter checks again what the scheduler checked, against the node
// as it is and the pods it already admitted (a pod may come with
// spec.nodeName set by its author, or the node may have filled up since):
// its sysctls, then the scheduler's own general filters (resources,
// affinity, node name, host ports, NoExecute taints). It keeps the pods
// let in with the resources allocated to them, which an in-place resize
// changes only if the new requests fit. It has its own locks: admissions
// and resizes are judged one at a time, and its maps have their own mutex.
//
// Where things live:
//
//	file            what it holds
//	admitter.go     the Admitter, its state and its NodeSource
//	admission.go    Admit and the scheduler's general filters, in the order they run
//	allocation.go   Allocate and Allocation: in-place resizes, Infeasible or Deferred
//	sysctls.go      the sysctls a pod may set (safe ones, --allowed-unsafe-sysctls)
//	doc.go          this map
package lifecycle
