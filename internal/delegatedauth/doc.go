// Package delegatedauth asks the cluster's API server the two questions a
// component's port delegates to it, as k8s.io/apiserver's delegating
// authenticator and authorizer do: whom a bearer token names (a
// TokenReview) and whether a user may do something (a
// SubjectAccessReview). Answers are kept for a while, as the real caches
// keep them, so that a scraper polling every 15 s costs the API server
// one review per TTL, not one per request.
//
// The kubelet's port (kubelet/server), the scheduler's and controller
// manager's (internal/secureserving) and the metrics server
// (metricsserver) all ask through it.
//
// Where things live:
//
//	file          what it holds
//	reviewer.go   Reviewer: TokenReview and SubjectAccessReview through the API server, cached
//	cache.go      the answers' cache, with an injected clock and a TTL per kind of answer
//	doc.go        this map
package delegatedauth
