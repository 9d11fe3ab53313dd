package prober

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestGRPCFailureWordsAsKubernetes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a server that never accepts reads as a connect timeout", status.Error(codes.Unavailable, "connection refused"),
			`timeout: failed to connect service "10.0.0.5:2379" within 1s: context deadline exceeded`},
		{"a server without the health service says so", status.Error(codes.Unimplemented, "unknown service grpc.health.v1.Health"),
			"this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"},
		{"a Check that outlives the timeout", status.Error(codes.DeadlineExceeded, "context deadline exceeded"),
			"timeout: health rpc did not complete within 1s"},
		{"an unknown service is a failed rpc", status.Error(codes.NotFound, "unknown service"),
			"error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"},
		{"a plain error is a failed rpc", errors.New("boom"), "error: health rpc probe failed: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := grpcFailure(tc.err, "10.0.0.5:2379", time.Second); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
