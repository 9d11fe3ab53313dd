// Package fakeruntime is the container runtime behind mkube's fake kubelet.
// It answers the calls a real kubelet makes over the CRI (RunPodSandbox,
// PullImage, CreateContainer, StartContainer, StopContainer,
// RemovePodSandbox) but runs nothing:
//
//   - an image is a name with a digest and size made up from that name, so
//     every node agrees on them; pulling one takes a configurable delay;
//   - a container is a record that moves Created → Running → Exited when
//     told to, and exits with code 0 ("Completed") the moment it is stopped;
//   - a pod sandbox gets its IP from the node's podCIDR, handed out the way
//     the host-local CNI plugin does (ipam.go).
//
// Everything lives in memory. A real runtime outlives its kubelet; this one
// dies with it, so a restarted kubelet rebuilds it from what the API server
// remembers (RestorePodSandbox, AddImage).
//
// Runtime is safe for concurrent use; it returns copies, never its own
// records.
package fakeruntime
