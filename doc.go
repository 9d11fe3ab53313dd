// Package mkube is a small, readable, Kubernetes-compatible control plane:
// an API server on etcd, and separate controller-manager, scheduler,
// kubelet and container-runtime programs that list-watch it, each logging
// what it does in the terms of seed 000's 13-step pod creation flow.
// README.md shows how to bring it up; this comment is the map of the
// module, one line per top-level folder:
//
//	folder              what lives there
//	apiserver/          kube-apiserver: REST handlers, admission, authentication and authorization, the registry of every resource kind
//	client/             the client-go of mkube: REST client, reflector and informers, workqueue, event recorder
//	controllermanager/  kube-controller-manager: one package per controller (replicaset, deployment, job, garbagecollector, ...)
//	scheduler/          kube-scheduler: the scheduling queue, cache, framework and its filter and score plugins
//	kubelet/            the kubelet: registers its node, runs the pods bound to it through the CRI, reports their status
//	cri/                the container runtime, mkube's containerd: serves the CRI to the kubelet (sandboxes, containers, images, exec, logs)
//	images/             scenery: the programs the simulated containers run (agnhost, a shell, etcd, redis, ...), skippable by a reader of Kubernetes
//	network/            the pod network: stand-ins for flannel (pod routes), kube-proxy (Services) and CoreDNS (cluster DNS)
//	store/              the storage layer under the API server: etcd (embedded by default), keys, watch, compaction
//	proto/              mkube's own gRPC services beside the CRI (Faults, PodNetwork): runtime.proto and its generated Go, runtimev1/
//	internal/           small rules shared by several components (quota, seed steps, logging, cron schedules, ...)
//	cmd/                one main per program (apiserver, controller-manager, scheduler, kubelet, runtime, mkube); main only wires
//	e2e/                end-to-end tests that build the binaries and run a real cluster
//	examples/           the manifests of the seeds' walkthroughs, applied by e2e tests
//	hack/               scripts: run a local cluster, compose smoke test, conformance
//
// doc_test.go keeps the package docs of the folders a learner reads true:
// every non-test file of those packages must be named in its package doc.
package mkube
