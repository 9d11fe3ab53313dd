// Package app assembles mkube's API server from Options, as
// kube-apiserver's cmd/kube-apiserver/app does: the one assembly both
// cmd/apiserver (from its flags) and internal/testserver (from a test's
// temp dir) run, so that in-process tests run the binary's server.
//
// NewConfig listens, makes the certificates and kubeconfigs, the
// authenticator and the etcd connection; New builds the apiserver.Server
// on that Config and lists its post-start hooks, named and in order in
// one place (hooks.go), as kube-apiserver's PostStartHooks; Start runs
// the storage, then the hooks, logging each by name, then serves and
// returns; Run starts and blocks until its context ends.
//
//	file               what it holds
//	doc.go             this map
//	options.go         Options: what the flags say
//	config.go          Config and NewConfig: ports, etcd, and the apiserver.Config wiring them
//	authentication.go  the authenticator and audit log the authentication options describe
//	secure.go          the secure port's PKI, TLS setup and kubeconfigs; the advertise address
//	aggregator.go      the aggregator's front-proxy certificate; extension-apiserver-authentication
//	nodeauthz.go       the Node authorizer's mode and the graph it follows
//	hooks.go           PostStartHook and the server's hooks, in order
//	server.go          Server: New, Start, Run
//	error.go           Error, a failed start naming its step
package app
