// Package conformance is a module of its own, apart from mkube's go.mod:
// it builds Kubernetes' e2e test binary (k8s.io/kubernetes/test/e2e, the
// suite with the [Conformance] specs), a test tool like kubectl, and the
// runner that drives it against mkube (runner/). `make conformance`.
package conformance

import _ "k8s.io/kubernetes/test/e2e"
