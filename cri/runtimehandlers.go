package cri

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A RuntimeClass names a handler (nodev1.RuntimeClass.handler), which
// the kubelet passes to RunPodSandbox as runtime_handler. In containerd a
// handler is a section of its config,
// [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.<handler>],
// saying which OCI runtime (runc, runsc, kata) runs the pod; "" is the
// default one. mkube runs nothing, so every handler it has is the same
// record-keeping sandbox; it has these:
//
//   - runc, containerd's default runtime, and "" for it;
//   - test-handler, the handler Kubernetes' CI nodes configure (also
//     runc) and the e2e suite's RuntimeClass specs ask for
//     (e2eruntimeclass.PreconfiguredRuntimeClassHandler).
//
// Any other handler is refused as containerd refuses it, and the pod
// stays Pending with a FailedCreatePodSandBox event that names it.
var runtimeHandlers = map[string]bool{"": true, "runc": true, "test-handler": true}

// checkRuntimeHandler is containerd's answer to a handler it has no
// runtime for: code Unknown, which the kubelet shows as
// "rpc error: code = Unknown desc = failed to get sandbox runtime: ...".
func checkRuntimeHandler(handler string) error {
	if runtimeHandlers[handler] {
		return nil
	}
	return status.Errorf(codes.Unknown, "failed to get sandbox runtime: no runtime for %q is configured", handler)
}
