// Package eviction is the kubelet's eviction manager, its local-storage
// part (upstream's pkg/kubelet/eviction: eviction_manager.go's
// localStorageEviction and helpers.go's messages): every
// EvictionMonitoringPeriod it measures the local storage of the running
// pods that limit it, and evicts a pod over a limit. It serves seed 000's
// step 12 (a pod runs only within its limits) and the status of step 13
// (phase Failed, reason Evicted, which a ReplicaSet replaces).
//
// A node's Manager is given what it needs of its kubelet (Options): the
// runtime's container stats and the labels that find a pod's containers,
// where the node's disk and the pods' logs are, the failures the kubelet
// decided (package status), its event recorder and its pod queue. The
// kubelet's pod worker then stops an evicted pod's containers with
// GracePeriodSeconds.
//
// # Where things live
//
//	file        what it holds
//	manager.go  Manager, Run (one loop for a fleet), the checks in Kubernetes' order, evicting
//	usage.go    Usage: what a pod's volumes, writable layers and logs hold, measured
//	doc.go      this map
package eviction
