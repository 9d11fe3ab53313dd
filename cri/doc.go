// Package cri is mkube's container runtime, its containerd: it serves
// Kubernetes' Container Runtime Interface v1 (RuntimeService and
// ImageService from k8s.io/cri-api/pkg/apis/runtime/v1) over gRPC on a unix
// socket.
//
// Step 12 of the pod creation flow has the kubelet "call Docker to start
// the containers". On a real node that call is CRI: the kubelet asks the
// runtime to RunPodSandbox (the pod's network namespace and IP), to
// PullImage, then to CreateContainer and StartContainer for each container,
// and later to StopContainer, RemoveContainer, StopPodSandbox and
// RemovePodSandbox. The real crictl speaks the same protocol, so a learner
// can drive this runtime by hand:
//
//	runtime --listen unix:///tmp/mkube/runtime.sock &
//	crictl --runtime-endpoint unix:///tmp/mkube/runtime.sock pull nginx:1.25
//	crictl --runtime-endpoint unix:///tmp/mkube/runtime.sock runp pod.json
//
// Everything lives in memory and nothing runs: a sandbox is a record with
// an IP from the pod CIDR, a container is a record that moves CREATED →
// RUNNING → EXITED when told to and writes a few lines to its CRI log file,
// an image is a name whose ID and size are made up from that name. Where
// CRI leaves a choice, the runtime does what containerd does, and the
// comment says so.
//
// The files follow the API: sandboxes.go, containers.go and images.go hold
// the RPCs on each kind of object, status.go the runtime-wide ones
// (Version, Status, RuntimeConfig). Beside them: process.go is what a
// container does once started, exec.go and streaming.go the commands run
// beside it (ExecSync; Exec, Attach and PortForward over the streaming
// server that kubectl exec reaches), attach.go its stdio for kubectl
// attach, logs.go its log file, volumes.go its mounts of the node's
// disk (boundfile.go a file bound alone, imagevolumes.go an image), dns.go
// its /etc/resolv.conf, identity.go its user, sysctls.go its /proc/sys,
// tmpfs.go the memory-backed mounts (emptyDir medium Memory), stats.go
// its memory and writable layer, ipam.go the pod IPs, reference.go image
// names, ids.go IDs, and server.go and listen.go the gRPC server and its
// socket.
package cri
