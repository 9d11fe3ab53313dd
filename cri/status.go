package cri

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/internal/version"
)

// The names the runtime gives itself in Version: `crictl version` prints
// them, and the kubelet puts them in node.status.nodeInfo
// (containerRuntimeVersion "mkube://v0.1.0").
const (
	// kubeAPIVersion is the version of the kubelet's runtime API; every
	// CRI runtime answers "0.1.0", the one version there has ever been.
	kubeAPIVersion    = "0.1.0"
	runtimeName       = "mkube"
	runtimeVersion    = version.Runtime
	runtimeAPIVersion = "v1"
)

func (s *Server) Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: kubeAPIVersion, RuntimeName: runtimeName,
		RuntimeVersion: runtimeVersion, RuntimeApiVersion: runtimeAPIVersion}, nil
}

// Status reports the two conditions the kubelet requires before it runs
// pods: RuntimeReady, and NetworkReady (on a real node, a CNI config is
// loaded). Both always hold here. With verbose, Info["config"] shows the
// runtime's settings, as containerd shows its own.
func (s *Server) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	resp := &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}
	if req.GetVerbose() {
		cfg, err := json.Marshal(map[string]string{
			"podCIDR":        s.opts.PodCIDR.String(),
			"imagePullDelay": s.opts.ImagePullDelay.String(),
			"cgroupDriver":   "systemd",
		})
		if err != nil {
			return nil, status.Errorf(codes.Internal, "encode config: %v", err)
		}
		resp.Info = map[string]string{"config": string(cfg)}
	}
	return resp, nil
}

// RuntimeConfig tells the kubelet which cgroup driver to use
// (KubeletCgroupDriverFromCRI): systemd, the default of kubeadm and of
// containerd's packaged configs.
func (s *Server) RuntimeConfig(ctx context.Context, req *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{
		CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD}}, nil
}
