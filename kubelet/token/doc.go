// Package token is the kubelet's token manager (pkg/kubelet/token,
// token_manager.go there): the service-account tokens that a pod's
// projected serviceAccountToken volumes hold, asked of the API server
// with TokenRequest and bound to the pod. It serves the volume set-up of
// seed 000's step 12, before the containers start.
//
// The Manager caches each token by what was asked, under its own lock,
// and says when one is due for renewal (80% of its life, or a day), which
// the kubelet's volume resync then writes to the pod's files.
//
// Where things live:
//
//	file       what it holds
//	token.go   the Manager: PodToken, renewal, expiry
//	doc.go     this map
package token
