package cri

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/proto/runtimev1"
)

// faultsHarness is a harness with a client of the runtime's Faults
// service, on the same connection as CRI's.
type faultsHarness struct {
	*harness
	faults runtimev1.FaultsClient
}

func newFaultsHarness(t *testing.T) *faultsHarness {
	t.Helper()
	h := newHarness(t, Options{})
	return &faultsHarness{harness: h, faults: runtimev1.NewFaultsClient(h.conn)}
}

func TestInjectedExits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inject   func(h *faultsHarness, id string) error
		exitCode int32
		reason   string
	}{
		{"a crash with a non-zero code exits with it, reason Error", func(h *faultsHarness, id string) error {
			_, err := h.faults.Crash(h.ctx, &runtimev1.CrashRequest{ContainerId: id, ExitCode: 3})
			return err
		}, 3, "Error"},
		{"a crash with code 0 is Completed", func(h *faultsHarness, id string) error {
			_, err := h.faults.Crash(h.ctx, &runtimev1.CrashRequest{ContainerId: id})
			return err
		}, 0, "Completed"},
		{"an OOM kill exits 137, reason OOMKilled", func(h *faultsHarness, id string) error {
			_, err := h.faults.OOMKill(h.ctx, &runtimev1.OOMKillRequest{ContainerId: id[:12]}) // a short ID, as crictl prints
			return err
		}, 137, "OOMKilled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFaultsHarness(t)
			_, id := h.runContainer(t, "web", "nginx")
			stream, err := h.rt.GetContainerEvents(h.ctx, &runtimeapi.GetEventsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the events subscription", func() bool {
				h.srv.mu.Lock()
				defer h.srv.mu.Unlock()
				return len(h.srv.subscribers) == 1
			})
			if err := tc.inject(h, id); err != nil {
				t.Fatal(err)
			}
			st := h.containerStatus(t, id)
			if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != tc.exitCode || st.Reason != tc.reason {
				t.Errorf("state %s exit %d %q, want EXITED %d %q", st.State, st.ExitCode, st.Reason, tc.exitCode, tc.reason)
			}
			ev, err := stream.Recv()
			if err != nil || ev.ContainerId != id || ev.ContainerEventType != runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT {
				t.Errorf("event %v (err %v), want CONTAINER_STOPPED of %s, which the kubelet's PLEG reads", ev, err, id)
			}
			// An exited container cannot crash again.
			if err := tc.inject(h, id); status.Code(err) != codes.FailedPrecondition {
				t.Errorf("second fault: %v, want FailedPrecondition", err)
			}
		})
	}
}

func TestFailProbesCountsDown(t *testing.T) {
	h := newFaultsHarness(t)
	_, id := h.runContainer(t, "web", "nginx")
	if _, err := h.faults.FailProbes(h.ctx, &runtimev1.FailProbesRequest{ContainerId: id[:8], Count: 2}); err != nil {
		t.Fatal(err)
	}
	var got []bool
	for range 3 {
		got = append(got, h.srv.takeProbeFailure(id))
	}
	if want := []bool{true, true, false}; !slices.Equal(got, want) {
		t.Errorf("probes fail %v, want %v: the next 2, then none", got, want)
	}
	if _, err := h.faults.FailProbes(h.ctx, &runtimev1.FailProbesRequest{ContainerId: "nosuch", Count: 1}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown container: %v, want NotFound", err)
	}
}

func TestFrozenRuntimeBlocksCRICallsUntilThawed(t *testing.T) {
	h := newFaultsHarness(t)
	if _, err := h.faults.Freeze(h.ctx, &runtimev1.FreezeRequest{Frozen: true}); err != nil {
		t.Fatal(err)
	}
	// A call with a deadline ends with it: the runtime hangs.
	ctx, cancel := context.WithTimeout(h.ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := h.rt.Version(ctx, &runtimeapi.VersionRequest{}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Version while frozen: %v, want DeadlineExceeded", err)
	}
	if _, err := h.img.ListImages(ctx, &runtimeapi.ListImagesRequest{}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("ListImages while frozen: %v, want DeadlineExceeded", err)
	}
	// A call without one waits, and completes once the runtime thaws.
	done := make(chan error, 1)
	go func() {
		_, err := h.rt.Version(h.ctx, &runtimeapi.VersionRequest{})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Version returned while frozen: %v", err)
	default:
	}
	if _, err := h.faults.Freeze(h.ctx, &runtimev1.FreezeRequest{Frozen: false}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Version after thaw: %v", err)
	}
}

func TestInspectNginx(t *testing.T) {
	h := newFaultsHarness(t)
	_, id := h.runContainer(t, "web", "nginx")
	var resp *runtimev1.InspectProcessResponse
	waitFor(t, "nginx to listen", func() bool {
		var err error
		resp, err = h.faults.InspectProcess(h.ctx, &runtimev1.InspectProcessRequest{ContainerId: id})
		if err != nil {
			t.Fatal(err)
		}
		return len(resp.ListeningPorts) > 0
	})
	if resp.State != "CONTAINER_RUNNING" || !slices.Equal(resp.ListeningPorts, []int32{80}) {
		t.Errorf("state %s ports %v, want CONTAINER_RUNNING listening on 80", resp.State, resp.ListeningPorts)
	}
	if !slices.Contains(resp.Argv, "nginx") || !slices.Contains(resp.Env, "HOSTNAME=web") {
		t.Errorf("argv %q env %q, want nginx's command line and HOSTNAME=web", resp.Argv, resp.Env)
	}
	var paths int
	for _, kv := range resp.Env {
		if strings.HasPrefix(kv, "PATH=") {
			paths++
		}
	}
	if paths != 1 {
		t.Errorf("env %q has PATH %d times, want once: the value the process sees", resp.Env, paths)
	}
	var conf bool
	for _, f := range resp.Files {
		conf = conf || (f.Path == "/etc/nginx/nginx.conf" && f.Size > 0)
	}
	if !conf {
		t.Errorf("files %v lack /etc/nginx/nginx.conf", resp.Files)
	}
}
