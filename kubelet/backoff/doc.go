// Package backoff is the kubelet's back-off (client-go's
// flowcontrol.Backoff, as the kubelet uses it): the delay before a
// container that keeps exiting is restarted (CrashLoopBackOff, seed 003
// §5.3), and before an image whose pull failed is pulled again
// (ImagePullBackOff, package images). It has no seed step of its own:
// it paces step 12 when it is repeated.
//
// Where things live:
//
//	file         what it holds
//	backoff.go   BackOff, the delays by key (pod UID and container or image), with its own lock
//	doc.go       this map
package backoff
