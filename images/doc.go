// Package images is scenery: the programs mkube's simulated containers
// run, not Kubernetes. A reader learning the control plane or the node can
// skip this folder.
//
// mkube's runtime (package cri) pulls no image and starts no real process.
// A container's command runs in a small sh-like interpreter over the
// container's in-memory filesystem, and an image is an entry in a table
// that says what its real namesake holds and prints:
//
//	folder      what it holds
//	shell/      the sh every container runs its command in, and busybox's
//	            everyday programs (echo, cat, sleep, curl, nc, ...)
//	catalog/    the well-known images of Kubernetes' docs and tests
//	            (nginx, redis, busybox, agnhost's subcommands, the
//	            sample API server, ...) and what each one does
//
// The runtime reaches this scenery through the image's configuration and
// programs (catalog.Image) and the shell's process (shell.Run); nothing
// here imports the runtime, the kubelet or the API server.
package images
