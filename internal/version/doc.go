// Package version is the one place mkube's version strings live; every
// program reads them from here.
//
// mkube speaks Kubernetes 1.32: the API server says so at /version (which
// kubectl reads to pick its client version) and in its OpenAPI
// documents, the kubelet says so as its node's status.nodeInfo.kubeletVersion,
// and the kubelet's probes and hooks say so in their user agents
// (kube-probe/1.32, kube-lifecycle/1.32), as in Kubernetes, where
// k8s.io/component-base/version holds the same strings for every binary.
// The container runtime has a version of its own, as containerd does:
// the node shows both ("mkube://v0.1.0").
//
// Where things live:
//
//	file          what it holds
//	version.go    the Kubernetes version (Major, Minor, GitVersion, MajorMinor),
//	              Info (the body of /version), and Runtime, the runtime's own
package version
