// Package kubelettest holds the test fixtures that the tests of package
// kubelet and of its sub-packages share: the same pod shapes, tested once
// against a sub-package alone (kubelet/eviction, kubelet/lifecycle,
// kubelet/envvars) and once against the Kubelet that wires it. It has no
// upstream counterpart (Kubernetes' kubelet tests build their pods in
// each package) and serves the tests of seed 000's steps 12 and 13 only:
// nothing outside a _test.go file imports it.
//
// Where things live:
//
//	file         what it holds
//	pods.go      AdmissionPod and HostPort (admission), StoragePod (local storage eviction)
//	values.go    ResourceList, and EnvLines to compare environments
//	doc.go       this map
package kubelettest
