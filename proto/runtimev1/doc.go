// Package runtimev1 is the generated Go of proto/runtime.proto: mkube's
// own gRPC service beside CRI, Faults, which package cri serves and the
// kubelet calls for `mkube crash`, `mkube oom`, `mkube fail-probes`,
// `mkube freeze` and `mkube inspect`. Regenerate it with `make proto`.
package runtimev1
