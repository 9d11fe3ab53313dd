package cri

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestRunPodSandboxAcceptsOnlyTheHandlersTheRuntimeHas(t *testing.T) {
	tests := []struct {
		handler string
		wantErr string // "" runs the sandbox
	}{
		{"", ""},
		{"runc", ""},
		{"test-handler", ""},
		{"runsc", `failed to get sandbox runtime: no runtime for "runsc" is configured`},
	}
	for _, tc := range tests {
		t.Run("handler "+tc.handler, func(t *testing.T) {
			h := newHarness(t, Options{})
			resp, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: h.podConfig("web"), RuntimeHandler: tc.handler})
			if tc.wantErr != "" {
				if st := status.Convert(err); st.Code() != codes.Unknown || st.Message() != tc.wantErr {
					t.Fatalf("error %v, want code Unknown with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: resp.GetPodSandboxId()})
			if err != nil {
				t.Fatal(err)
			}
			if got := st.GetStatus().GetRuntimeHandler(); got != tc.handler {
				t.Fatalf("status reports handler %q, want %q", got, tc.handler)
			}
		})
	}
}
