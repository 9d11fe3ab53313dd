package fakeruntime

import (
	"context"
	"net/netip"
	"runtime"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newTestRuntime(t *testing.T, pullDelay time.Duration) (*Runtime, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	r, err := New(netip.MustParsePrefix("10.244.1.0/24"), pullDelay, clk)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

func TestPullImageTakesThePullDelay(t *testing.T) {
	r, clk := newTestRuntime(t, 300*time.Millisecond)
	done := make(chan Image)
	go func() {
		img, err := r.PullImage(context.Background(), "nginx:1.25")
		if err != nil {
			t.Error(err)
		}
		done <- img
	}()
	for !clk.HasWaiters() { // until the pull waits on the clock
		runtime.Gosched()
	}
	if _, ok := r.ImageStatus("nginx:1.25"); ok {
		t.Fatal("the image is present before the pull delay has passed")
	}
	clk.Step(300 * time.Millisecond)
	img := <-done
	if got, ok := r.ImageStatus("nginx:1.25"); !ok || got != img {
		t.Fatalf("after the pull, ImageStatus = %+v, %v; want %+v, true", got, ok, img)
	}
}

func TestPullImageStopsWhenTheContextEnds(t *testing.T) {
	r, _ := newTestRuntime(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.PullImage(ctx, "nginx:1.25"); err == nil {
		t.Fatal("PullImage succeeded with a cancelled context")
	}
}

func TestNewImageIsTheSameOnEveryNode(t *testing.T) {
	a, b := NewImage("nginx:1.25"), NewImage("nginx:1.25")
	if a != b {
		t.Fatalf("NewImage differs between calls: %+v vs %+v", a, b)
	}
	if a.Size < minImageSize || a.Size >= maxImageSize {
		t.Errorf("size %d is outside [%d, %d)", a.Size, minImageSize, maxImageSize)
	}
	if NewImage("redis:7").ID == a.ID {
		t.Error("two images share an ID")
	}
}

func TestListImagesIsLargestFirst(t *testing.T) {
	r, _ := newTestRuntime(t, 0)
	r.AddImage(Image{Ref: "small", Size: 1})
	r.AddImage(Image{Ref: "big", Size: 3})
	r.AddImage(Image{Ref: "medium", Size: 2})
	var got []string
	for _, img := range r.ListImages() {
		got = append(got, img.Ref)
	}
	if want := []string{"big", "medium", "small"}; !slices.Equal(got, want) {
		t.Fatalf("ListImages = %v, want %v", got, want)
	}
}

func TestContainerLifecycle(t *testing.T) {
	r, clk := newTestRuntime(t, 0)
	pod := PodRef{UID: "uid-1", Namespace: "default", Name: "web"}
	sb, err := r.RunPodSandbox(pod)
	if err != nil {
		t.Fatal(err)
	}
	if sb.IP.String() != "10.244.1.2" {
		t.Errorf("sandbox IP = %s, want 10.244.1.2", sb.IP)
	}
	if again, _ := r.RunPodSandbox(pod); again.IP != sb.IP {
		t.Errorf("a second RunPodSandbox changed the IP to %s", again.IP)
	}

	if _, err := r.CreateContainer(pod.UID, "web", "nginx:1.25"); err == nil {
		t.Fatal("a container was created from an image that is not on the node")
	}
	r.PullImage(context.Background(), "nginx:1.25")
	c, err := r.CreateContainer(pod.UID, "web", "nginx:1.25")
	if err != nil {
		t.Fatal(err)
	}
	if c.State != ContainerCreated || c.Attempt != 0 || c.ImageID != NewImage("nginx:1.25").ID {
		t.Errorf("created container = %+v", c)
	}
	clk.Step(time.Second)
	if c, err = r.StartContainer(pod.UID, "web"); err != nil || c.State != ContainerRunning || !c.StartedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("StartContainer = %+v, %v", c, err)
	}
	if _, err := r.StartContainer(pod.UID, "web"); err == nil {
		t.Error("a running container was started again")
	}
	if _, err := r.CreateContainer(pod.UID, "web", "nginx:1.25"); err == nil {
		t.Error("a second instance was created while the first runs")
	}
	clk.Step(time.Second)
	if c, err = r.StopContainer(pod.UID, "web"); err != nil || c.State != ContainerExited || c.ExitCode != 0 || c.Reason != "Completed" {
		t.Fatalf("StopContainer = %+v, %v", c, err)
	}

	next, err := r.CreateContainer(pod.UID, "web", "nginx:1.25")
	if err != nil {
		t.Fatal(err)
	}
	if next.Attempt != 1 || next.Previous == nil || next.Previous.ID != c.ID || next.ID == c.ID {
		t.Errorf("a restarted container should be attempt 1 with the old one as previous: %+v", next)
	}

	if !r.RemovePodSandbox(pod.UID) {
		t.Fatal("RemovePodSandbox found nothing")
	}
	if _, ok := r.PodSandboxStatus(pod.UID); ok {
		t.Error("the sandbox is still there")
	}
	other, _ := r.RunPodSandbox(PodRef{UID: "uid-2"})
	if other.IP.String() != "10.244.1.3" {
		t.Errorf("next pod IP = %s, want 10.244.1.3 (round-robin, not the one just freed)", other.IP)
	}
}

func TestRestorePodSandboxKeepsTheIPItCan(t *testing.T) {
	r, _ := newTestRuntime(t, 0)
	a, _ := r.RestorePodSandbox(PodRef{UID: "a"}, netip.MustParseAddr("10.244.1.9"), []Container{{Name: "c", State: ContainerRunning}}, t0)
	if a.IP.String() != "10.244.1.9" || a.Containers["c"].State != ContainerRunning {
		t.Errorf("restored sandbox = %+v", a)
	}
	b, _ := r.RestorePodSandbox(PodRef{UID: "b"}, netip.MustParseAddr("10.244.1.9"), nil, t0)
	if b.IP == a.IP {
		t.Errorf("two pods got %s", b.IP)
	}
}
