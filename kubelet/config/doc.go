// Package config is the kubelet's static pods, a pod source beside the
// API server (seed 000 step 12; seed 003 §4.2), after upstream's
// pkg/kubelet/config (its file source, file.go) and the mirror client and
// mirror-pod bookkeeping of pkg/kubelet/pod (mirror_client.go): the
// manifests of --pod-manifest-path read every --file-check-frequency, each
// static pod synced with its mirror pod, and the mirrors created and
// deleted.
//
// A node's Manager remembers its static pods in a StaticPods, under a lock
// of its own rather than the Kubelet's: the manifests as last read, the API
// server's UID of each static pod's mirror (to which the status manager
// writes), and the mirrors a user deleted. What a static pod does on the
// node goes through the kubelet's pod worker as any pod's: the Manager is
// given its acts (run, release, forget, stop in the background) as func
// fields (Options), since it cannot import package kubelet.
//
// # Where things live
//
//	file        what it holds
//	manager.go  Manager, its Options; Sync: a static pod and its mirror made to match; stopping a removed one
//	file.go     Run: the manifest directory read, each manifest decoded into its mirror and hash
//	mirror.go   creating and deleting mirror pods
//	static.go   StaticPod, StaticPods: manifests read, mirror UIDs, mirrors deleted
//	doc.go      this map
package config
