package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// t0 is when every test starts, on its fake clock.
var t0 = time.Date(2026, 8, 3, 10, 15, 42, 123456789, time.UTC)

// harness is a runtime serving on a unix socket and a gRPC client of it,
// the way the kubelet and crictl reach a runtime.
type harness struct {
	srv    *Server
	conn   *grpc.ClientConn // CRI's, and mkube's Faults beside it
	rt     runtimeapi.RuntimeServiceClient
	img    runtimeapi.ImageServiceClient
	clock  *clocktesting.FakeClock
	logDir string // where pods made by runPod keep their logs
	ctx    context.Context
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	// A short directory: a unix socket's path must fit in 108 bytes, and
	// t.TempDir() holds the (long) test name.
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	clk := clocktesting.NewFakeClock(t0)
	opts.Clock = clk
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "unix://" + filepath.Join(dir, "runtime.sock")
	l, err := Listen(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &harness{srv: srv, conn: conn, rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn),
		clock: clk, logDir: t.TempDir(), ctx: ctx}
}

// podConfig is a sandbox config as the kubelet writes it for pod name.
func (h *harness) podConfig(name string) *runtimeapi.PodSandboxConfig {
	uid := "uid-" + name
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		LogDirectory: filepath.Join(h.logDir, "default_"+name+"_"+uid),
		Labels: map[string]string{"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "default",
			"io.kubernetes.pod.uid": uid},
	}
}

// containerConfig is a container config as the kubelet writes it.
func containerConfig(name, image string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: image},
		LogPath:  name + "/0.log",
		Labels:   map[string]string{"io.kubernetes.container.name": name},
	}
}

func (h *harness) runPod(t *testing.T, name string) string {
	t.Helper()
	resp, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: h.podConfig(name)})
	if err != nil {
		t.Fatalf("RunPodSandbox %s: %v", name, err)
	}
	return resp.PodSandboxId
}

func (h *harness) pull(t *testing.T, image string) string {
	t.Helper()
	resp, err := h.img.PullImage(h.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		t.Fatalf("PullImage %s: %v", image, err)
	}
	return resp.ImageRef
}

func (h *harness) create(t *testing.T, podID string, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	resp, err := h.rt.CreateContainer(h.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID, Config: cfg})
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", cfg.Metadata.Name, err)
	}
	return resp.ContainerId
}

func (h *harness) start(t *testing.T, id string) {
	t.Helper()
	if _, err := h.rt.StartContainer(h.ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("StartContainer %s: %v", id, err)
	}
}

// runContainer runs pod and, in it, a started container name of nginx.
func (h *harness) runContainer(t *testing.T, pod, name string) (podID, id string) {
	t.Helper()
	podID = h.runPod(t, pod)
	h.pull(t, "nginx:1.25")
	id = h.create(t, podID, containerConfig(name, "nginx:1.25"))
	h.start(t, id)
	return podID, id
}

func (h *harness) containerStatus(t *testing.T, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := h.rt.ContainerStatus(h.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatalf("ContainerStatus %s: %v", id, err)
	}
	return resp.Status
}

func TestContainerLifecycle(t *testing.T) {
	h := newHarness(t, Options{})
	podID := h.runPod(t, "web")
	imageRef := h.pull(t, "nginx:1.25")
	if want := newImage("docker.io/library/nginx:1.25").id; imageRef != want {
		t.Fatalf("PullImage image_ref = %s, want %s", imageRef, want)
	}

	h.clock.Step(time.Second)
	cfg := containerConfig("nginx", imageRef) // the kubelet creates from the image ID PullImage returned
	cfg.Command, cfg.Args = []string{"nginx"}, []string{"-g", "daemon off;"}
	cfg.Envs = []*runtimeapi.KeyValue{{Key: "PASSWORD", Value: []byte("secret")}, {Key: "MODE", Value: []byte("prod")}}
	cfg.Mounts = []*runtimeapi.Mount{{ContainerPath: "/etc/nginx/conf.d", HostPath: "/var/lib/kubelet/pods/uid-web/volumes/conf", Readonly: true}}
	id := h.create(t, podID, cfg)
	st := h.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_CREATED || st.CreatedAt != t0.Add(time.Second).UnixNano() || st.StartedAt != 0 {
		t.Fatalf("after create: state %s createdAt %d startedAt %d, want CREATED at t0+1s, not started", st.State, st.CreatedAt, st.StartedAt)
	}

	h.clock.Step(time.Second)
	h.start(t, id)
	st = h.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING || st.StartedAt != t0.Add(2*time.Second).UnixNano() {
		t.Fatalf("after start: state %s startedAt %d, want RUNNING at t0+2s", st.State, st.StartedAt)
	}
	if st.Image.Image != "docker.io/library/nginx:1.25" || st.ImageRef != imageRef {
		t.Errorf("status image %q ref %q, want the full tag docker.io/library/nginx:1.25 and %s", st.Image.Image, st.ImageRef, imageRef)
	}
	wantLog := filepath.Join(h.logDir, "default_web_uid-web", "nginx", "0.log")
	if st.LogPath != wantLog {
		t.Errorf("log path %q, want the sandbox's log directory joined with the container's log path %q", st.LogPath, wantLog)
	}

	// nginx prints its start lines, then listens: wait for it before the
	// clock moves on, or its lines would be stamped later.
	waitFor(t, "nginx to listen on 80", func() bool {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		c := h.srv.containers[id]
		return c != nil && c.proc != nil && c.proc.sh.Listening(80)
	})
	h.clock.Step(time.Second)
	if _, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	st = h.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 0 || st.Reason != "Completed" ||
		st.FinishedAt != t0.Add(3*time.Second).UnixNano() {
		t.Fatalf("after stop: state %s exit %d reason %q finishedAt %d, want EXITED 0 Completed at t0+3s", st.State, st.ExitCode, st.Reason, st.FinishedAt)
	}

	// The log is what nginx printed, on the stream it uses, stamped when
	// it printed it: at its start, and when the stop signal reached it.
	ts := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	got, err := os.ReadFile(wantLog)
	for _, line := range []string{
		ts(2*time.Second) + " stderr F 2026/08/03 10:15:44 [notice] 1#1: start worker processes\n",
		ts(3*time.Second) + " stderr F 2026/08/03 10:15:45 [notice] 1#1: signal 3 (SIGQUIT) received, shutting down\n",
	} {
		if err != nil || !strings.Contains(string(got), line) {
			t.Errorf("log file (err %v):\n%s\nwant a line\n%s", err, got, line)
		}
	}

	if _, err := h.rt.RemoveContainer(h.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	_, err = h.rt.ContainerStatus(h.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("ContainerStatus after remove: %v, want NotFound", err)
	}
}

func TestStopContainer(t *testing.T) {
	tests := []struct {
		name     string
		started  bool
		stops    []int64 // the timeouts of successive StopContainer calls
		state    runtimeapi.ContainerState
		exitCode int32
		reason   string
	}{
		{"a stop with a grace period is a SIGTERM the container honours at once: exit 0, Completed",
			true, []int64{30}, runtimeapi.ContainerState_CONTAINER_EXITED, 0, "Completed"},
		{"a stop with timeout 0, as crictl sends by default, is a SIGKILL: exit 137, Error",
			true, []int64{0}, runtimeapi.ContainerState_CONTAINER_EXITED, 137, "Error"},
		{"stopping an exited container again changes nothing",
			true, []int64{30, 0}, runtimeapi.ContainerState_CONTAINER_EXITED, 0, "Completed"},
		{"stopping a created container does nothing, as in containerd",
			false, []int64{30}, runtimeapi.ContainerState_CONTAINER_CREATED, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			podID := h.runPod(t, "web")
			h.pull(t, "nginx")
			id := h.create(t, podID, containerConfig("nginx", "nginx"))
			if tt.started {
				h.start(t, id)
			}
			for _, timeout := range tt.stops {
				if _, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout}); err != nil {
					t.Fatalf("StopContainer(timeout %d): %v", timeout, err)
				}
			}
			st := h.containerStatus(t, id)
			if st.State != tt.state || st.ExitCode != tt.exitCode || st.Reason != tt.reason {
				t.Errorf("state %s exit %d reason %q, want %s %d %q", st.State, st.ExitCode, st.Reason, tt.state, tt.exitCode, tt.reason)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		call func(t *testing.T, h *harness) error
		code codes.Code
		msg  string
	}{
		{"a sandbox without metadata is refused", func(t *testing.T, h *harness) error {
			_, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{}})
			return err
		}, codes.InvalidArgument, "metadata"},
		{"a second sandbox for the same pod and attempt is refused: its name is reserved", func(t *testing.T, h *harness) error {
			id := h.runPod(t, "web")
			_, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: h.podConfig("web")})
			if err != nil && !strings.Contains(err.Error(), id) {
				t.Errorf("error %q does not name the sandbox %s holding the name", err, id)
			}
			return err
		}, codes.AlreadyExists, `sandbox name "web_default_uid-web_0" is reserved`},
		{"the status of an unknown sandbox is NotFound", func(t *testing.T, h *harness) error {
			_, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: "nope"})
			return err
		}, codes.NotFound, `sandbox "nope" not found`},
		{"stopping an unknown sandbox is NotFound, as in containerd", func(t *testing.T, h *harness) error {
			_, err := h.rt.StopPodSandbox(h.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: "nope"})
			return err
		}, codes.NotFound, `sandbox "nope" not found`},
		{"a container of an image that was not pulled is NotFound", func(t *testing.T, h *harness) error {
			_, err := h.rt.CreateContainer(h.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: h.runPod(t, "web"),
				Config: containerConfig("redis", "redis:7")})
			return err
		}, codes.NotFound, `image "redis:7" not found`},
		{"a container in an unknown sandbox is NotFound", func(t *testing.T, h *harness) error {
			h.pull(t, "nginx")
			_, err := h.rt.CreateContainer(h.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: "nope",
				Config: containerConfig("nginx", "nginx")})
			return err
		}, codes.NotFound, `sandbox "nope" not found`},
		{"a container in a stopped sandbox is refused", func(t *testing.T, h *harness) error {
			podID := h.runPod(t, "web")
			h.pull(t, "nginx")
			if _, err := h.rt.StopPodSandbox(h.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podID}); err != nil {
				t.Fatal(err)
			}
			_, err := h.rt.CreateContainer(h.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID,
				Config: containerConfig("nginx", "nginx")})
			return err
		}, codes.FailedPrecondition, "is not ready"},
		{"a container without a name is refused", func(t *testing.T, h *harness) error {
			_, err := h.rt.CreateContainer(h.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: h.runPod(t, "web"),
				Config: &runtimeapi.ContainerConfig{Image: &runtimeapi.ImageSpec{Image: "nginx"}}})
			return err
		}, codes.InvalidArgument, "name"},
		{"a second container with the same name and attempt is refused", func(t *testing.T, h *harness) error {
			podID, _ := h.runContainer(t, "web", "nginx")
			_, err := h.rt.CreateContainer(h.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID,
				Config: containerConfig("nginx", "nginx:1.25")})
			return err
		}, codes.AlreadyExists, `container name "nginx_web_default_uid-web_0" is reserved`},
		{"a running container cannot be started again", func(t *testing.T, h *harness) error {
			_, id := h.runContainer(t, "web", "nginx")
			_, err := h.rt.StartContainer(h.ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
			return err
		}, codes.FailedPrecondition, "is in CONTAINER_RUNNING state"},
		{"the status of an unknown container is NotFound", func(t *testing.T, h *harness) error {
			_, err := h.rt.ContainerStatus(h.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "x"})
			return err
		}, codes.NotFound, `container "x" not found`},
		{"a container ID is required", func(t *testing.T, h *harness) error {
			_, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{})
			return err
		}, codes.InvalidArgument, "container ID is required"},
		{"an upper-case image name is not a valid reference", func(t *testing.T, h *harness) error {
			_, err := h.img.PullImage(h.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "Nginx"}})
			return err
		}, codes.InvalidArgument, "must be lowercase"},
		{"exec in a container that does not run", func(t *testing.T, h *harness) error {
			podID := h.runPod(t, "web")
			h.pull(t, "nginx")
			id := h.create(t, podID, containerConfig("nginx", "nginx"))
			_, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"ls"}})
			return err
		}, codes.FailedPrecondition, "is not running"},
		{"streaming exec needs the streaming server (streaming.go)", func(t *testing.T, h *harness) error {
			_, id := h.runContainer(t, "web", "nginx")
			_, err := h.rt.Exec(h.ctx, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"ls"}, Stdout: true})
			return err
		}, codes.Unavailable, "streaming server is not running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			err := tt.call(t, h)
			if st := status.Convert(err); st.Code() != tt.code || !strings.Contains(st.Message(), tt.msg) {
				t.Errorf("error %v, want code %s with %q", err, tt.code, tt.msg)
			}
		})
	}
}

func TestRemovesAreIdempotent(t *testing.T) {
	h := newHarness(t, Options{})
	if _, err := h.rt.RemovePodSandbox(h.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: "gone"}); err != nil {
		t.Errorf("RemovePodSandbox of a missing sandbox: %v, want success (CRI: idempotent)", err)
	}
	if _, err := h.rt.RemoveContainer(h.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: "gone"}); err != nil {
		t.Errorf("RemoveContainer of a missing container: %v, want success (CRI: idempotent)", err)
	}
	if _, err := h.img.RemoveImage(h.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "gone:1"}}); err != nil {
		t.Errorf("RemoveImage of a missing image: %v, want success (CRI: idempotent)", err)
	}
}

func TestRemoveContainerForciblyRemovesARunningOne(t *testing.T) {
	h := newHarness(t, Options{})
	_, id := h.runContainer(t, "web", "nginx")
	if _, err := h.rt.RemoveContainer(h.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("RemoveContainer of a running container: %v, want success (CRI: forcibly removed)", err)
	}
	if _, err := h.rt.ContainerStatus(h.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); status.Code(err) != codes.NotFound {
		t.Errorf("ContainerStatus after remove: %v, want NotFound", err)
	}
}

func TestStopAndRemovePodSandbox(t *testing.T) {
	h := newHarness(t, Options{})
	podID, id := h.runContainer(t, "web", "nginx")
	sandboxStatus := func() *runtimeapi.PodSandboxStatus {
		resp, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status
	}
	if st := sandboxStatus(); st.State != runtimeapi.PodSandboxState_SANDBOX_READY || st.Network.Ip != "10.88.0.2" {
		t.Fatalf("sandbox %s with IP %q, want READY with the first pod IP of 10.88.0.0/16, 10.88.0.2", st.State, st.Network.Ip)
	}

	// StopPodSandbox kills the running containers and frees the IP.
	for range 2 { // CRI: stopping twice is fine
		if _, err := h.rt.StopPodSandbox(h.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podID}); err != nil {
			t.Fatal(err)
		}
	}
	if st := sandboxStatus(); st.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY || st.Network.Ip != "" {
		t.Errorf("stopped sandbox %s with IP %q, want NOTREADY and no IP", st.State, st.Network.Ip)
	}
	if st := h.containerStatus(t, id); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 137 {
		t.Errorf("container of a stopped sandbox: %s exit %d, want EXITED 137 (killed)", st.State, st.ExitCode)
	}

	// RemovePodSandbox removes its containers and frees its name.
	if _, err := h.rt.RemovePodSandbox(h.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: podID}); err != nil {
		t.Fatal(err)
	}
	list, err := h.rt.ListContainers(h.ctx, &runtimeapi.ListContainersRequest{})
	if err != nil || len(list.Containers) != 0 {
		t.Errorf("containers after RemovePodSandbox: %v (err %v), want none", list.GetContainers(), err)
	}
	if _, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID}); status.Code(err) != codes.NotFound {
		t.Errorf("PodSandboxStatus after remove: %v, want NotFound", err)
	}
	again := h.runPod(t, "web")
	resp, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: again})
	if err != nil || resp.Status.Network.Ip != "10.88.0.3" {
		t.Errorf("the pod's new sandbox: %v (err %v), want IP 10.88.0.3: the search goes on after the last address handed out", resp.GetStatus().GetNetwork(), err)
	}
}

func TestHostNetworkSandboxHasNoIP(t *testing.T) {
	h := newHarness(t, Options{})
	cfg := h.podConfig("static")
	cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}}
	run, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: run.PodSandboxId})
	if err != nil || resp.Status.Network.Ip != "" {
		t.Errorf("host-network sandbox IP %q (err %v), want none: the pod has the node's", resp.GetStatus().GetNetwork().GetIp(), err)
	}
	web := h.runPod(t, "web")
	resp, err = h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: web})
	if err != nil || resp.Status.Network.Ip != "10.88.0.2" {
		t.Errorf("next sandbox IP %q (err %v), want 10.88.0.2: a host-network pod takes none", resp.GetStatus().GetNetwork().GetIp(), err)
	}
}

func TestListFilters(t *testing.T) {
	h := newHarness(t, Options{})
	web, nginx := h.runContainer(t, "web", "nginx")
	h.clock.Step(time.Second)
	sidecar := h.create(t, web, containerConfig("sidecar", "nginx:1.25"))
	h.clock.Step(time.Second)
	db := h.runPod(t, "db")
	h.pull(t, "redis:7")
	redis := h.create(t, db, containerConfig("redis", "redis:7"))
	h.start(t, redis)
	if _, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: redis, Timeout: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.rt.StopPodSandbox(h.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: db}); err != nil {
		t.Fatal(err)
	}
	running := &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}

	containerTests := []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"no filter lists every container, oldest first", nil, []string{nginx, sidecar, redis}},
		{"a state filter lists the running ones (crictl ps without -a)", &runtimeapi.ContainerFilter{State: running}, []string{nginx}},
		{"a sandbox filter lists the pod's containers", &runtimeapi.ContainerFilter{PodSandboxId: web}, []string{nginx, sidecar}},
		{"a sandbox filter may be a prefix of the ID, as crictl prints it", &runtimeapi.ContainerFilter{PodSandboxId: db[:13]}, []string{redis}},
		{"an ID filter may be a prefix", &runtimeapi.ContainerFilter{Id: sidecar[:13]}, []string{sidecar}},
		{"an unknown ID matches nothing", &runtimeapi.ContainerFilter{Id: "nope"}, nil},
		{"a label selector matches every label it names", &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{"io.kubernetes.container.name": "redis"}}, []string{redis}},
		{"filters combine", &runtimeapi.ContainerFilter{PodSandboxId: web, State: running,
			LabelSelector: map[string]string{"io.kubernetes.container.name": "sidecar"}}, nil},
	}
	for _, tt := range containerTests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h.rt.ListContainers(h.ctx, &runtimeapi.ListContainersRequest{Filter: tt.filter})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range resp.Containers {
				got = append(got, c.Id)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	sandboxTests := []struct {
		name   string
		filter *runtimeapi.PodSandboxFilter
		want   []string
	}{
		{"no filter lists every sandbox, oldest first", nil, []string{web, db}},
		{"a state filter lists the ready ones", &runtimeapi.PodSandboxFilter{
			State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}, []string{web}},
		{"an ID filter may be a prefix", &runtimeapi.PodSandboxFilter{Id: db[:13]}, []string{db}},
		{"a label selector finds a pod by name, as crictl pods --label does", &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{"io.kubernetes.pod.name": "web"}}, []string{web}},
		{"a label selector with a label nobody has matches nothing", &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{"app": "web"}}, nil},
	}
	for _, tt := range sandboxTests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h.rt.ListPodSandbox(h.ctx, &runtimeapi.ListPodSandboxRequest{Filter: tt.filter})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sb := range resp.Items {
				got = append(got, sb.Id)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestImages(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.pull(t, "nginx")
	h.pull(t, "registry.k8s.io/pause:3.10")

	for _, name := range []string{"nginx", "nginx:latest", "docker.io/library/nginx:latest", id, strings.TrimPrefix(id, "sha256:")} {
		resp, err := h.img.ImageStatus(h.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: name}})
		if err != nil || resp.Image.GetId() != id {
			t.Errorf("ImageStatus(%q) = %v (err %v), want the image %s", name, resp.GetImage(), err, id)
		}
	}
	resp, err := h.img.ImageStatus(h.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "nginx:1.25"}})
	if err != nil || resp.Image != nil {
		t.Errorf("ImageStatus of an image not pulled = %v (err %v), want a nil image and no error", resp.GetImage(), err)
	}

	list, err := h.img.ListImages(h.ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(list.Images) != 2 {
		t.Fatalf("ListImages = %v (err %v), want 2 images", list.GetImages(), err)
	}
	img := list.Images[0]
	if fmt.Sprint(img.RepoTags) != "[docker.io/library/nginx:latest]" || img.Size < 10<<20 || img.Size > 250<<20 {
		t.Errorf("first image %v, size %d: want docker.io/library/nginx:latest weighing 10-250 MiB", img.RepoTags, img.Size)
	}
	filtered, err := h.img.ListImages(h.ctx, &runtimeapi.ListImagesRequest{Filter: &runtimeapi.ImageFilter{
		Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/pause:3.10"}}})
	if err != nil || len(filtered.Images) != 1 || filtered.Images[0].RepoTags[0] != "registry.k8s.io/pause:3.10" {
		t.Errorf("ListImages filtered on pause = %v (err %v), want the pause image", filtered.GetImages(), err)
	}

	fs, err := h.img.ImageFsInfo(h.ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || fs.ImageFilesystems[0].UsedBytes.Value != list.Images[0].Size+list.Images[1].Size {
		t.Errorf("ImageFsInfo = %v (err %v), want the images' total size used", fs, err)
	}

	if _, err := h.img.RemoveImage(h.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx:latest"}}); err != nil {
		t.Fatal(err)
	}
	resp, err = h.img.ImageStatus(h.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: id}})
	if err != nil || resp.Image != nil {
		t.Errorf("ImageStatus after RemoveImage = %v (err %v), want none", resp.GetImage(), err)
	}
}

func TestPullTakesThePullDelay(t *testing.T) {
	h := newHarness(t, Options{ImagePullDelay: 5 * time.Second})
	pulled := make(chan error, 1)
	go func() {
		_, err := h.img.PullImage(h.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
		pulled <- err
	}()
	// Wait, with a deadline, until the pull waits on the clock.
	deadline := time.Now().Add(10 * time.Second)
	for !h.clock.HasWaiters() {
		select {
		case err := <-pulled:
			t.Fatalf("pull returned before the delay: %v", err)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the pull never waited on the clock")
		}
	}
	h.clock.Step(4 * time.Second)
	select {
	case err := <-pulled:
		t.Fatalf("pull returned after 4s of a 5s delay: %v", err)
	default:
	}
	h.clock.Step(time.Second)
	if err := <-pulled; err != nil {
		t.Fatal(err)
	}
}

func TestVerboseInfo(t *testing.T) {
	h := newHarness(t, Options{})
	podID := h.runPod(t, "web")
	h.pull(t, "busybox")
	cfg := containerConfig("shell", "busybox")
	cfg.Command, cfg.Args = []string{"sh", "-c"}, []string{"echo hi; sleep 3600"}
	cfg.Envs = []*runtimeapi.KeyValue{{Key: "GREETING", Value: []byte("hi")}}
	cfg.Mounts = []*runtimeapi.Mount{{ContainerPath: "/data", HostPath: "/srv/data"}}
	id := h.create(t, podID, cfg)

	resp, err := h.rt.ContainerStatus(h.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		SandboxID string `json:"sandboxID"`
		Pid       *int   `json:"pid"`
		Config    struct {
			Command, Args []string
			Envs          []struct{ Key, Value string }
			Mounts        []struct {
				ContainerPath string `json:"container_path"`
			}
		}
	}
	if err := json.Unmarshal([]byte(resp.Info["info"]), &info); err != nil {
		t.Fatalf("info %q: %v", resp.Info["info"], err)
	}
	if info.SandboxID != podID || info.Pid == nil || *info.Pid != 0 || fmt.Sprint(info.Config.Command, info.Config.Args) != "[sh -c] [echo hi; sleep 3600]" ||
		len(info.Config.Envs) != 1 || info.Config.Envs[0].Value != "hi" || len(info.Config.Mounts) != 1 || info.Config.Mounts[0].ContainerPath != "/data" {
		t.Errorf("container info %s: want its sandbox, pid 0, and the command, args, envs and mounts it was created with", resp.Info["info"])
	}

	sb, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID, Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	var sbInfo struct {
		NetNamespaceClosed *bool `json:"netNamespaceClosed"`
		Config             struct{ Metadata struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(sb.Info["info"]), &sbInfo); err != nil || sbInfo.NetNamespaceClosed == nil || *sbInfo.NetNamespaceClosed || sbInfo.Config.Metadata.Name != "web" {
		t.Errorf("sandbox info %s (err %v): want an open network namespace and the config of pod web", sb.Info["info"], err)
	}

	if plain, _ := h.rt.ContainerStatus(h.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); plain.GetInfo() != nil {
		t.Errorf("info without verbose: %v, want none", plain.Info)
	}
}

func TestAContainerWithoutALogDirectoryKeepsNoLog(t *testing.T) {
	h := newHarness(t, Options{})
	cfg := h.podConfig("web")
	cfg.LogDirectory = ""
	run, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	h.pull(t, "nginx")
	id := h.create(t, run.PodSandboxId, containerConfig("nginx", "nginx"))
	h.start(t, id)
	if st := h.containerStatus(t, id); st.LogPath != "" || st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("log path %q state %s, want no log and RUNNING", st.LogPath, st.State)
	}
	if entries, _ := os.ReadDir(h.logDir); len(entries) != 0 {
		t.Errorf("files written under %s: %v, want none", h.logDir, entries)
	}
}

func TestVersionStatusAndRuntimeConfig(t *testing.T) {
	h := newHarness(t, Options{})
	v, err := h.rt.Version(h.ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != "mkube" || v.RuntimeApiVersion != "v1" || v.Version != "0.1.0" {
		t.Errorf("Version = %v (err %v), want runtime mkube speaking v1", v, err)
	}
	st, err := h.rt.Status(h.ctx, &runtimeapi.StatusRequest{Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, c := range st.Status.Conditions {
		ready[c.Type] = c.Status
	}
	if !ready[runtimeapi.RuntimeReady] || !ready[runtimeapi.NetworkReady] {
		t.Errorf("conditions %v, want RuntimeReady and NetworkReady true", st.Status.Conditions)
	}
	var cfg map[string]string
	if err := json.Unmarshal([]byte(st.Info["config"]), &cfg); err != nil || cfg["podCIDR"] != "10.88.0.0/16" {
		t.Errorf("verbose info %v (err %v), want the config with the pod CIDR", st.Info, err)
	}
	rc, err := h.rt.RuntimeConfig(h.ctx, &runtimeapi.RuntimeConfigRequest{})
	if err != nil || rc.Linux.CgroupDriver != runtimeapi.CgroupDriver_SYSTEMD {
		t.Errorf("RuntimeConfig = %v (err %v), want the systemd cgroup driver", rc, err)
	}
}
