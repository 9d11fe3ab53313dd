// Package podcertificate is the kubelet's pod certificate manager
// (pkg/kubelet/podcertificate, podcertificatemanager.go there): the
// private keys and certificate chains that a pod's projected
// podCertificate sources hold. It asks for them with
// PodCertificateRequests, as the node, and serves them once a signer
// issued them; until then the volume cannot be set up, so it holds the
// containers of seed 000's step 12 until their credentials exist. A
// refresh comes at the volume resync, from beginRefreshAt.
//
// One Manager serves the fleet, under its own lock (and one per
// projection); each node passes itself as the Node its requests go as
// (ClientNode), which NodeRestriction holds to its own pods.
//
// Where things live:
//
//	file         what it holds
//	manager.go   the Manager: a projection's life (request, wait, issued, refresh, denied), Files of a source
//	node.go      a source's key and stub request; the Node its requests go as (ClientNode)
//	watch.go     Watch: the fleet's watch of its nodes' requests, whose answer syncs the pod
//	doc.go       this map
package podcertificate
