package kubelet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/cri"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	"github.com/mkube/mkube/network/podnetwork"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The kubelet is a CRI client, as every kubelet since Kubernetes 1.24
// (when dockershim went): it reaches its container runtime over gRPC on a
// unix socket, --container-runtime-endpoint, with the generated clients
// of k8s.io/cri-api. Without that flag it starts mkube's runtime (package
// cri) in its own process on a private socket and dials that, so the
// calls cross the same boundary either way.

// runtimeConnectTimeout bounds the Version call a kubelet makes first: a
// runtime that does not answer within it is not there, and the kubelet
// exits saying so rather than hang (the real kubelet's
// --runtime-request-timeout is 2 minutes; a local socket answers in
// microseconds, so 5 s is generous).
const runtimeConnectTimeout = 5 * time.Second

// runtimeService is the kubelet's connection to its runtime.
type runtimeService struct {
	runtime runtimeapi.RuntimeServiceClient
	images  runtimeapi.ImageServiceClient
	faults  runtimev1.FaultsClient // mkube's own service beside CRI (cri/faults.go)
	// probeFaults holds the containers (raw IDs) with probe failures
	// injected through this kubelet (`mkube fail-probes`), whose probes
	// ask the runtime before they run; the others' need not.
	probeFaults sync.Map
	// network reaches the pods' servers: pod IPs are no host's
	// addresses, so the kubelet dials them through the runtime
	// (podnetwork.go).
	network runtimev1.PodNetworkClient
	conn    *grpc.ClientConn
	// name is the runtime's runtime_name from Version: container IDs in
	// pod statuses are "<name>://<id>", as "containerd://..." on a real
	// node. version is what node.status.nodeInfo reports:
	// "<name>://<runtime_version>".
	name, version string
	// inProcess is the runtime started by this kubelet, nil for an
	// external one. Only restore.go uses it, to rebuild what the API
	// server says ran before the kubelet restarted.
	inProcess *cri.InProcess
	// peerAddress is where the other nodes' runtimes reach this one's
	// pods, "" if they cannot (network/podnetwork).
	peerAddress string
	// nodeRoot is the nodes' disks (Config.NodeRoot), where the kubelet
	// reads what containers wrote to their termination-log files.
	nodeRoot string
}

// connectRuntime dials endpoint, or starts an in-process runtime with
// opts if endpoint is "", and checks that the runtime answers Version.
func connectRuntime(ctx context.Context, endpoint string, opts cri.Options, dial ...grpc.DialOption) (*runtimeService, error) {
	rs := &runtimeService{nodeRoot: opts.NodeRoot}
	if endpoint == "" {
		p, err := cri.StartInProcess(opts)
		if err != nil {
			return nil, fmt.Errorf("start in-process runtime: %w", err)
		}
		rs.inProcess, endpoint = p, p.Endpoint
	}
	conn, err := grpc.NewClient(endpoint, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dial...)...)
	if err != nil {
		rs.close()
		return nil, fmt.Errorf("container runtime %s: %w", endpoint, err)
	}
	rs.conn = conn
	rs.runtime, rs.images = runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn)
	rs.faults, rs.network = runtimev1.NewFaultsClient(conn), runtimev1.NewPodNetworkClient(conn)
	vctx, cancel := context.WithTimeout(ctx, runtimeConnectTimeout)
	defer cancel()
	// gRPC fails fast: a socket nobody listens on is an error at once,
	// not a wait for the timeout.
	v, err := rs.runtime.Version(vctx, &runtimeapi.VersionRequest{})
	if err != nil {
		rs.close()
		return nil, fmt.Errorf("container runtime %s is not answering: version: %w", endpoint, err)
	}
	rs.name, rs.version = v.GetRuntimeName(), v.GetRuntimeName()+"://"+v.GetRuntimeVersion()
	if rs.peerAddress, err = podnetwork.LearnPeerAddress(vctx, rs.network); err != nil {
		rs.close()
		return nil, fmt.Errorf("container runtime %s: pod network: %w", endpoint, err)
	}
	return rs, nil
}

// probeFailure asks the runtime, before a probe of the container with
// ID id (raw or "mkube://..."), whether `mkube fail-probes` made this
// probe fail, which counts it. Only a container the fault was injected
// into through this kubelet is asked about: 10,000 probes a second need
// not make 10,000 more calls. A runtime that cannot answer has injected
// nothing: the probe runs.
func (rs *runtimeService) probeFailure(ctx context.Context, id string) bool {
	id = kubecontainer.RawContainerID(id)
	if _, pending := rs.probeFaults.Load(id); !pending {
		return false // the common case: no RPC for it
	}
	resp, err := rs.faults.TakeProbeFailure(ctx, &runtimev1.TakeProbeFailureRequest{ContainerId: id})
	if err == nil && !resp.GetFail() {
		rs.probeFaults.Delete(id) // used up
	}
	return err == nil && resp.GetFail()
}

// failProbes injects the fault through the runtime and remembers that
// the container's probes must ask for it (probeFailure).
func (rs *runtimeService) failProbes(ctx context.Context, id string, count int32) error {
	if _, err := rs.faults.FailProbes(ctx, &runtimev1.FailProbesRequest{ContainerId: id, Count: count}); err != nil {
		return err
	}
	rs.probeFaults.Store(id, true)
	return nil
}

// pods reads the kubelet's pods back from the runtime by their labels
// (kubelet/kuberuntime's PodReader).
func (rs *runtimeService) pods() kuberuntime.PodReader {
	return kuberuntime.PodReader{Runtime: rs.runtime, RuntimeName: rs.name, NodeRoot: rs.nodeRoot}
}

// podSandbox returns what the runtime has for the pod with uid, or nil
// if it has no sandbox for it.
func (rs *runtimeService) podSandbox(ctx context.Context, uid types.UID) (*kubecontainer.PodSandbox, error) {
	return rs.pods().PodSandbox(ctx, uid)
}

// containerID is the pod status' containerID: "<runtime>://<id>".
func (rs *runtimeService) containerID(id string) string { return rs.pods().ContainerID(id) }

// close drops the connection and stops an in-process runtime.
func (rs *runtimeService) close() {
	if rs.conn != nil {
		rs.conn.Close()
	}
	if rs.inProcess != nil {
		rs.inProcess.Stop()
	}
}
