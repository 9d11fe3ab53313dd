package cri

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// waitFor polls cond, which a container's goroutine makes true; it fails
// the test if that takes more than 10 s of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCommandLineIsKubernetesRule(t *testing.T) {
	img := images.Image{Entrypoint: []string{"/docker-entrypoint.sh"}, Cmd: []string{"nginx", "-g", "daemon off;"}}
	for _, tc := range []struct {
		command, args, want []string
	}{
		{nil, nil, []string{"/docker-entrypoint.sh", "nginx", "-g", "daemon off;"}},
		{nil, []string{"nginx", "-T"}, []string{"/docker-entrypoint.sh", "nginx", "-T"}},
		{[]string{"sh", "-c", "echo hi"}, nil, []string{"sh", "-c", "echo hi"}},
		{[]string{"sh", "-c"}, []string{"echo hi"}, []string{"sh", "-c", "echo hi"}},
	} {
		if got := commandLine(img, tc.command, tc.args); !slices.Equal(got, tc.want) {
			t.Errorf("command %q args %q: runs %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
}

// A container's process ends on its own, is stopped, or is killed; each
// way has its exit code and reason, as containerd reports them.
func TestProcessExits(t *testing.T) {
	for _, tc := range []struct {
		name, image   string
		command, args []string
		memoryLimit   int64
		stop          int64 // StopContainer's timeout once running; -1: none
		step          time.Duration
		exitCode      int32
		reason        string
		log           string // a line the log must hold
	}{
		{name: "exit 0 is Completed", image: "busybox", command: []string{"sh", "-c", "echo done"}, stop: -1,
			exitCode: 0, reason: "Completed", log: "stdout F done"},
		{name: "a non-zero exit is Error", image: "busybox", command: []string{"sh", "-c", "echo oops >&2; exit 3"}, stop: -1,
			exitCode: 3, reason: "Error"},
		{name: "an unknown program is 127", image: "busybox", command: []string{"nosuch"}, stop: -1,
			exitCode: 127, reason: "Error", log: "stderr F sh: nosuch: not found"},
		{name: "busybox's default shell exits at once", image: "busybox", stop: -1, exitCode: 0, reason: "Completed"},
		{name: "mysql without a root password exits 1", image: "mysql:8", stop: -1, exitCode: 1, reason: "Error",
			log: "Database is uninitialized and password option is not specified"},
		{name: "memory above the limit is OOMKilled", image: "polinux/stress", command: []string{"stress"},
			args: []string{"--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"}, memoryLimit: 100 << 20, stop: -1,
			exitCode: 137, reason: "OOMKilled"},
		{name: "nginx honours the stop signal", image: "nginx", stop: 30, exitCode: 0, reason: "Completed",
			log: "signal 3 (SIGQUIT) received, shutting down"},
		{name: "a sleeping shell ignores SIGTERM and is killed when the grace period ends", image: "busybox",
			command: []string{"sh", "-c", "sleep 3600"}, stop: 30, step: 30 * time.Second, exitCode: 137, reason: "Error"},
		{name: "crictl's stop (timeout 0) kills at once", image: "nginx", stop: 0, exitCode: 137, reason: "Error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			podID := h.runPod(t, "p")
			h.pull(t, tc.image)
			cfg := containerConfig("c", tc.image)
			cfg.Command, cfg.Args = tc.command, tc.args
			if tc.memoryLimit > 0 {
				cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: tc.memoryLimit}}
			}
			id := h.create(t, podID, cfg)
			h.start(t, id)
			if tc.stop >= 0 {
				stopped := make(chan error, 1)
				go func() {
					_, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: tc.stop})
					stopped <- err
				}()
				var err error
				for waiting := true; waiting; {
					select {
					case err = <-stopped:
						waiting = false
					case <-time.After(time.Millisecond):
						// The grace period passes on the fake clock, in steps:
						// the stop's timer may not be set yet.
						h.clock.Step(tc.step)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "the exit", func() bool { return h.containerStatus(t, id).State == runtimeapi.ContainerState_CONTAINER_EXITED })
			st := h.containerStatus(t, id)
			if st.ExitCode != tc.exitCode || st.Reason != tc.reason {
				t.Errorf("exit %d %q, want %d %q", st.ExitCode, st.Reason, tc.exitCode, tc.reason)
			}
			if log, _ := os.ReadFile(st.LogPath); !strings.Contains(string(log), tc.log) {
				t.Errorf("log:\n%s\nwant a line with %q", log, tc.log)
			}
		})
	}
}

// The events stream says when each container started and stopped.
func TestContainerEvents(t *testing.T) {
	h := newHarness(t, Options{})
	stream, err := h.rt.GetContainerEvents(h.ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil { // subscribed: no event is missed
		t.Fatal(err)
	}
	podID := h.runPod(t, "p")
	h.pull(t, "busybox")
	cfg := containerConfig("c", "busybox")
	cfg.Command = []string{"sh", "-c", "exit 1"}
	id := h.create(t, podID, cfg)
	h.start(t, id)
	for _, want := range []runtimeapi.ContainerEventType{runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT} {
		ev, err := stream.Recv()
		if err == io.EOF || err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if ev.ContainerId != id || ev.ContainerEventType != want || ev.PodSandboxStatus.GetMetadata().GetName() != "p" {
			t.Fatalf("event %v, want %s of %s in pod p", ev, want, id)
		}
	}
}

// Some images cannot be pulled: a missing tag is NotFound, an
// unresolvable registry Unknown, each in containerd's words.
func TestPullFailures(t *testing.T) {
	h := newHarness(t, Options{})
	for image, want := range map[string]string{
		"nginx:doesnotexist":     `code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:doesnotexist"`,
		"registry.invalid/app:1": `code = Unknown desc = failed to pull and unpack image "registry.invalid/app:1"`,
	} {
		_, err := h.img.PullImage(h.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PullImage %s: %v, want %s", image, err, want)
		}
		if st, _ := h.img.ImageStatus(h.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}}); st.GetImage() != nil {
			t.Errorf("%s is on the node after a failed pull", image)
		}
	}
}

// ExecSync runs beside the main process, in its filesystem and
// environment: what the main process wrote, a command reads.
func TestExecSync(t *testing.T) {
	h := newHarness(t, Options{})
	podID := h.runPod(t, "p")
	h.pull(t, "busybox")
	cfg := containerConfig("c", "busybox")
	cfg.Command = []string{"sh", "-c", "touch /tmp/healthy; echo ready > /tmp/state; sleep 3600"}
	cfg.Envs = []*runtimeapi.KeyValue{{Key: "GREETING", Value: []byte("hi")}}
	id := h.create(t, podID, cfg)
	h.start(t, id)
	exec := func(cmd ...string) (*runtimeapi.ExecSyncResponse, error) {
		return h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 1})
	}
	waitFor(t, "the main process wrote /tmp/state", func() bool {
		r, err := exec("cat", "/tmp/state")
		return err == nil && string(r.Stdout) == "ready\n"
	})
	for _, tc := range []struct {
		cmd    []string
		stdout string
		stderr string
		code   int32
	}{
		{[]string{"sh", "-c", "echo $GREETING; test -f /tmp/healthy"}, "hi\n", "", 0},
		{[]string{"cat", "/nope"}, "", "cat: can't open '/nope': No such file or directory\n", 1},
		{[]string{"nosuch"}, "", "sh: nosuch: not found\n", 127},
	} {
		r, err := exec(tc.cmd...)
		if err != nil || string(r.Stdout) != tc.stdout || string(r.Stderr) != tc.stderr || r.ExitCode != tc.code {
			t.Errorf("exec %q: %v %q %q %d; want %q %q %d", tc.cmd, err, r.GetStdout(), r.GetStderr(), r.GetExitCode(), tc.stdout, tc.stderr, tc.code)
		}
	}
	done := make(chan error, 1)
	go func() { _, err := exec("sleep", "10"); done <- err }()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("a command past its timeout: %v, want DeadlineExceeded", err)
			}
			waiting = false
		case <-time.After(time.Millisecond):
			h.clock.Step(time.Second)
		}
	}
}
