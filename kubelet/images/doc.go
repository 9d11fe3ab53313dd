// Package images is the kubelet's image manager (pkg/kubelet/images,
// image_manager.go and its pull policy there): the Pulling and Pulled of
// seed 000's step 12, before CreateContainer. Its log lines carry step=12.
//
// EnsureImage asks the runtime whether the container's image is present
// (ImageStatus), pulls it as the pull policy says (PullImage, with the
// events `kubectl describe pod` shows), and holds back a pull that failed
// for its back-off (ErrImagePull, then ImagePullBackOff). The Manager
// keeps why each pull failed under its own lock.
//
// Where things live:
//
//	file        what it holds
//	images.go   the Manager, EnsureImage and the pull policy (shouldPull)
//	doc.go      this map
package images
