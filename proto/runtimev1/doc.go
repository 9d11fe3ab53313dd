// Package runtimev1 is the generated Go of proto/runtime.proto: mkube's
// own gRPC services beside CRI, which package cri serves. The kubelet
// calls Faults for `mkube crash`, `mkube oom`, `mkube fail-probes`,
// `mkube freeze` and `mkube inspect`, and before each probe; it reaches
// its pods' servers through PodNetwork. Regenerate it with `make proto`;
// podnetwork.go, the Dial errors' wording, is written by hand.
package runtimev1
