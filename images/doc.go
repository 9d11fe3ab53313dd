// Package images is scenery: the programs mkube's simulated containers
// run, not Kubernetes. A reader learning the control plane or the node can
// skip this folder.
//
// mkube's runtime (package cri) pulls no image and starts no real process.
// A container's command runs in a small sh-like interpreter over the
// container's in-memory filesystem, and an image is an entry in a table
// that says what its real namesake holds and prints:
//
//	folder             what it holds
//	shell/             the sh every container runs its command in, and
//	                   busybox's everyday programs (echo, cat, sleep,
//	                   curl, nc, ...)
//	catalog/           the well-known images of Kubernetes' docs and
//	                   tests (nginx, redis, busybox, agnhost's
//	                   subcommands, ...) and what each one does
//	sampleapiserver/   the program of registry.k8s.io/e2e-test-images/
//	                   sample-apiserver, the aggregated API server of
//	                   Kubernetes' Aggregator spec, which catalog/ registers
//	lib/               what those programs are written with: stand-ins for
//	                   net/http's server, pflag, klog, client-go's
//	                   in-cluster config
//
// This package itself is the door between the runtime and the scenery.
// On a real node containerd unpacks an image (its config and layers),
// writes an OCI runtime spec for the container (the process's args, env,
// user, hostname, root and mounts) and has runc start it; here the same
// three things cross in three files:
//
//	file         what crosses
//	image.go     an image: Image (its ENTRYPOINT, CMD, ENV, files and
//	             programs) by Lookup, its Size and its PullError
//	process.go   a process: ProcessOptions, what the runtime offers a
//	             program (filesystem, network, clock, stdio, environment,
//	             identity, memory limit, CPU accounting); Process, what
//	             it holds of the program (Exec, Terminate, MemoryUsage,
//	             Ports); how it ends (ErrKilled, ErrOOMKilled); its tty
//	             (Terminal); CPU, the cgroup's CPU accounting
//	fs.go        the filesystem: FS, and Volume, what a mount is to it
//	doc.go       this map
//
// The names are aliases of the scenery's own types, not copies, because
// the runtime and the program share the values: the FS the runtime fills
// is the one the process writes to and a probe reads. The filesystem is
// the one wide dependency (fs.go says why). The runtime's process side
// uses nothing else of the scenery; the pod network hands a connection or
// a datagram to the image's Serve or ServeDatagram and a DNS question
// from shell to the cluster's DNS directly. Nothing in this folder
// imports the runtime, the kubelet or the API server, except tests, which
// borrow the pod network's in-memory connections (podnet).
package images
