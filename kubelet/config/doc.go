// Package config holds the kubelet's memory of its static pods, a pod
// source beside the API server (seed 000 step 12), after upstream's
// pkg/kubelet/config (its file source) and the mirror-pod bookkeeping of
// pkg/kubelet/pod: the manifests as last read, the API server's UID of
// each static pod's mirror (to which the status manager writes), and
// the mirrors a user deleted, under a lock of its own rather than the
// Kubelet's.
//
// Reading the manifest directory and syncing a static pod with its
// mirror are still package kubelet's (staticpods.go there).
//
// # Where things live
//
//	file       what it holds
//	static.go  StaticPod, StaticPods: manifests read, mirror UIDs, mirrors deleted
//	doc.go     this map
package config
