package fakeruntime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// PodRef names the pod a sandbox belongs to.
type PodRef struct {
	UID       types.UID
	Namespace string
	Name      string
}

// ContainerState is where a fake container is in its life.
type ContainerState string

// A container is Created, then Running once started, then Exited once
// stopped; a new instance (Attempt+1) replaces an Exited one.
const (
	ContainerCreated ContainerState = "Created"
	ContainerRunning ContainerState = "Running"
	ContainerExited  ContainerState = "Exited"
)

// Container is one instance of a pod's container.
type Container struct {
	Name       string
	ID         string // "mkube://<hex>", the container status' containerID
	Image      string
	ImageID    string
	State      ContainerState
	Attempt    int32 // instances before this one: the status' restartCount
	CreatedAt  time.Time
	StartedAt  time.Time // zero until started
	FinishedAt time.Time // zero until exited
	ExitCode   int32
	Reason     string     // why it exited, e.g. "Completed"
	Previous   *Container // the exited instance this one replaced: lastState
}

// PodSandbox is a pod on the node: its network namespace (and so its IP)
// and its containers.
type PodSandbox struct {
	Pod        PodRef
	IP         netip.Addr
	CreatedAt  time.Time
	Containers map[string]Container // by container name
}

func (s *PodSandbox) clone() PodSandbox {
	out := *s
	out.Containers = make(map[string]Container, len(s.Containers))
	for name, c := range s.Containers {
		out.Containers[name] = c
	}
	return out
}

// Runtime is a node's fake container runtime.
type Runtime struct {
	clock     clock.Clock
	pullDelay time.Duration

	mu        sync.Mutex
	images    map[string]Image // by Ref
	sandboxes map[types.UID]*PodSandbox
	ipam      *ipam
	logs      map[string]*containerLog // by container ID
}

// New returns an empty runtime whose pods get IPs from podCIDR and whose
// image pulls take pullDelay on clk (nil: the real clock).
func New(podCIDR netip.Prefix, pullDelay time.Duration, clk clock.Clock) (*Runtime, error) {
	a, err := newIPAM(podCIDR)
	if err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Runtime{clock: clk, pullDelay: pullDelay, images: map[string]Image{},
		sandboxes: map[types.UID]*PodSandbox{}, ipam: a, logs: map[string]*containerLog{}}, nil
}

// RunPodSandbox creates the pod's sandbox and gives it an IP, or returns
// the sandbox it already has.
func (r *Runtime) RunPodSandbox(pod PodRef) (PodSandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sb, ok := r.sandboxes[pod.UID]; ok {
		return sb.clone(), nil
	}
	ip, err := r.ipam.allocate(pod.UID)
	if err != nil {
		return PodSandbox{}, fmt.Errorf("run pod sandbox %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	sb := &PodSandbox{Pod: pod, IP: ip, CreatedAt: r.clock.Now(), Containers: map[string]Container{}}
	r.sandboxes[pod.UID] = sb
	return sb.clone(), nil
}

// RestorePodSandbox recreates the sandbox of a pod that was running before
// the kubelet restarted, with the IP and containers it had. If that IP is
// no longer valid or free, the pod gets a new one.
func (r *Runtime) RestorePodSandbox(pod PodRef, ip netip.Addr, containers []Container, createdAt time.Time) (PodSandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ip.IsValid() || r.ipam.reserve(pod.UID, ip) != nil {
		var err error
		if ip, err = r.ipam.allocate(pod.UID); err != nil {
			return PodSandbox{}, fmt.Errorf("restore pod sandbox %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	sb := &PodSandbox{Pod: pod, IP: ip, CreatedAt: createdAt, Containers: map[string]Container{}}
	for _, c := range containers {
		sb.Containers[c.Name] = c
	}
	r.sandboxes[pod.UID] = sb
	return sb.clone(), nil
}

// PodSandboxStatus returns the pod's sandbox, if it has one.
func (r *Runtime) PodSandboxStatus(uid types.UID) (PodSandbox, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[uid]
	if !ok {
		return PodSandbox{}, false
	}
	return sb.clone(), true
}

// ListPodSandboxes returns every sandbox, ordered by namespace and name.
func (r *Runtime) ListPodSandboxes() []PodSandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PodSandbox, 0, len(r.sandboxes))
	for _, sb := range r.sandboxes {
		out = append(out, sb.clone())
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pod, out[j].Pod
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// RemovePodSandbox forgets the pod and its containers and frees its IP. It
// reports whether there was anything to remove.
func (r *Runtime) RemovePodSandbox(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[uid]
	if ok {
		for _, c := range sb.Containers {
			delete(r.logs, c.ID)
			if c.Previous != nil {
				delete(r.logs, c.Previous.ID)
			}
		}
	}
	delete(r.sandboxes, uid)
	r.ipam.release(uid)
	return ok
}

// CreateContainer creates container name from image in the pod's sandbox.
// The image must be on the node, as in a real runtime. If an exited
// instance exists, the new one replaces it as the next attempt.
func (r *Runtime) CreateContainer(uid types.UID, name, image string) (Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[uid]
	if !ok {
		return Container{}, fmt.Errorf("create container %q: pod sandbox %s not found", name, uid)
	}
	img, ok := r.images[image]
	if !ok {
		return Container{}, fmt.Errorf("create container %q: image %q not present", name, image)
	}
	c := Container{Name: name, Image: image, ImageID: img.ID, State: ContainerCreated, CreatedAt: r.clock.Now()}
	if old, ok := sb.Containers[name]; ok {
		if old.State != ContainerExited {
			return Container{}, fmt.Errorf("create container %q: it exists and is %s", name, old.State)
		}
		old.Previous = nil // keep one generation, as the API shows only lastState
		c.Attempt, c.Previous = old.Attempt+1, &old
	}
	c.ID = containerID(uid, name, c.Attempt)
	sb.Containers[name] = c
	return c, nil
}

// StartContainer starts a created container.
func (r *Runtime) StartContainer(uid types.UID, name string) (Container, error) {
	return r.update(uid, name, func(c *Container) error {
		if c.State != ContainerCreated {
			return fmt.Errorf("start container %q: it is %s, not %s", name, c.State, ContainerCreated)
		}
		c.State, c.StartedAt = ContainerRunning, r.clock.Now()
		return nil
	})
}

// StopContainer stops a container. Fake processes handle SIGTERM at once
// and exit 0, which Kubernetes reports as reason "Completed". Stopping an
// exited container does nothing, as in CRI.
func (r *Runtime) StopContainer(uid types.UID, name string) (Container, error) {
	return r.update(uid, name, func(c *Container) error {
		if c.State == ContainerExited {
			return nil
		}
		c.State, c.FinishedAt, c.ExitCode, c.Reason = ContainerExited, r.clock.Now(), 0, "Completed"
		r.closeLog(c.ID)
		return nil
	})
}

func (r *Runtime) update(uid types.UID, name string, fn func(*Container) error) (Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[uid]
	if !ok {
		return Container{}, fmt.Errorf("container %q: pod sandbox %s not found", name, uid)
	}
	c, ok := sb.Containers[name]
	if !ok {
		return Container{}, fmt.Errorf("container %q not found in pod sandbox %s", name, uid)
	}
	if err := fn(&c); err != nil {
		return Container{}, err
	}
	sb.Containers[name] = c
	return c, nil
}

// containerID is stable for a pod, container and attempt, so tests and
// logs can predict it; the "mkube://" scheme names the runtime as
// "containerd://" does on a real node.
func containerID(uid types.UID, name string, attempt int32) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", uid, name, attempt))
	return "mkube://" + hex.EncodeToString(sum[:])
}
