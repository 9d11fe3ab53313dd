package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
)

// grpc: the gRPC Health Checking Protocol's Check, on the pod's IP;
// SERVING is success (Kubernetes' grpc probe, pkg/probe/grpc).
func (r *Prober) grpc(ctx context.Context, pod *corev1.Pod, h *corev1.GRPCAction, timeout time.Duration) (Result, string) {
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(h.Port)))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(probeUserAgent),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return r.dialPodAddr(ctx, addr) }))
	if err != nil {
		return Failure, err.Error()
	}
	defer conn.Close()
	service := ""
	if h.Service != nil {
		service = *h.Service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return Failure, grpcFailure(err, addr, timeout)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return Failure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus())
	}
	return Success, ""
}

// grpcFailure words a failed Check as Kubernetes' probe does. Kubernetes
// dials blocking until the timeout, so a server that never answers the
// connection reads "failed to connect ... within"; mkube's client connects
// lazily and sees the same case as Unavailable.
func grpcFailure(err error, addr string, timeout time.Duration) string {
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Sprintf("timeout: failed to connect service %q within %v: context deadline exceeded", addr, timeout)
	case codes.Unimplemented:
		return "this server does not implement the grpc health protocol (grpc.health.v1.Health): " + st.Message()
	case codes.DeadlineExceeded:
		return fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
	}
	return fmt.Sprintf("error: health rpc probe failed: %+v", err)
}
