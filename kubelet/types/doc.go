// Package types holds what every kubelet package says of a pod
// (pkg/kubelet/types there, imported as kubetypes): the annotations of a
// static pod's mirror, the UID the runtime knows a pod by, and which of
// its containers are sidecars, init, app or ephemeral ones. It has no
// state and no seed step of its own: it is the vocabulary of steps 12
// and 13.
//
// Where things live:
//
//	file     what it holds
//	pod.go   PodGVK, the config.* annotations, IsMirrorPod, RuntimeUID, IsSidecar, AllContainers, PodFinished
//	doc.go   this map
package types
