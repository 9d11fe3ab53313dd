package cri

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/images"
)

// A container's cgroup. The kubelet gives each container cgroup
// settings (its LinuxContainerResources: cpu shares from its cpu
// request, a CFS quota from its cpu limit, a memory limit) when it
// creates it, and new ones with UpdateContainerResources when the pod is
// resized in place. The container sees them, as on a cgroup v2 node, in
// the read-only files of /sys/fs/cgroup (`mount -t cgroup2` lists it),
// computed as runc writes them:
//
//	cpu.max     "<quota> <period>", or "max 100000" without a cpu limit
//	cpu.weight  1 + (shares-2)*9999/262142: 100m → 4, 1 CPU → 39
//	memory.max  the limit in bytes, or "max" without one
//	cpu.stat    the CPU time its processes used (usage_usec), and the
//	            CFS periods the quota held them back in (nr_periods,
//	            nr_throttled, throttled_usec)
//
// What the files say changes as soon as the settings do: a resize
// reaches the running process without a restart. The memory limit is
// also what the process is OOM-killed above (images.ProcessOptions.MemoryLimit);
// the CPU quota caps what its CPU accounting (images.CPU) counts.
//
// CPU is accounted, not measured: the container's programs say what
// they would use (a busy loop a core, a request its handler's CPU time),
// and the accounting integrates that over the runtime's clock, capped by
// the quota. So a busy container shows a core of usage without taking a
// core of the host, and a fake clock gives tests exact numbers.

// cgroupPeriod is the CFS period the kubelet sets with a quota (100 ms).
const cgroupPeriod = 100_000

// resources are a container's cgroup settings, read by its files while
// the runtime's lock is not held, and its CPU accounting.
type resources struct {
	p   atomic.Pointer[runtimeapi.LinuxContainerResources]
	cpu *images.CPU // shared by the container's processes (main and exec'd)
}

// init makes a new container's cgroup: settings res, CPU counted from
// now on clk.
func (r *resources) init(clk clock.PassiveClock, res *runtimeapi.LinuxContainerResources) {
	r.cpu = images.NewCPU(clk)
	r.set(res)
}

func (r *resources) get() *runtimeapi.LinuxContainerResources {
	if res := r.p.Load(); res != nil {
		return res
	}
	return &runtimeapi.LinuxContainerResources{}
}

func (r *resources) set(res *runtimeapi.LinuxContainerResources) {
	if r.cpu != nil {
		r.cpu.SetLimit(res.GetCpuQuota(), res.GetCpuPeriod())
	}
	if res == nil {
		r.p.Store(nil)
		return
	}
	r.p.Store(proto.Clone(res).(*runtimeapi.LinuxContainerResources))
}

// cgroupFiles are the files of /sys/fs/cgroup for settings res.
func cgroupFiles(res *runtimeapi.LinuxContainerResources) map[string]string {
	cpuMax := "max " + strconv.Itoa(cgroupPeriod)
	if res.GetCpuQuota() > 0 {
		period := res.GetCpuPeriod()
		if period == 0 {
			period = cgroupPeriod
		}
		cpuMax = fmt.Sprintf("%d %d", res.GetCpuQuota(), period)
	}
	weight := int64(100) // the kernel's default, for shares never set
	if shares := res.GetCpuShares(); shares > 0 {
		weight = 1 + (max(shares, 2)-2)*9999/262142
	}
	memMax := "max"
	if res.GetMemoryLimitInBytes() > 0 {
		memMax = strconv.FormatInt(res.GetMemoryLimitInBytes(), 10)
	}
	return map[string]string{"cpu.max": cpuMax + "\n", "cpu.weight": strconv.FormatInt(weight, 10) + "\n", "memory.max": memMax + "\n"}
}

// cgroupVolume is /sys/fs/cgroup: a flat, read-only directory of the
// container's current settings.
type cgroupVolume struct{ r *resources }

func (v cgroupVolume) files() map[string]string {
	files := cgroupFiles(v.r.get())
	if v.r.cpu != nil {
		files["cpu.stat"] = cpuStatFile(v.r.cpu.Stat())
	}
	return files
}

// cpuStatFile is cpu.stat as the kernel writes it. All the time is the
// user's: the simulated programs make no system calls worth counting.
func cpuStatFile(st images.CPUStat) string {
	usage := st.Usage.Microseconds()
	return fmt.Sprintf("usage_usec %d\nuser_usec %d\nsystem_usec 0\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\nnr_bursts 0\nburst_usec 0\n",
		usage, usage, st.Periods, st.Throttled, st.ThrottledTime.Microseconds())
}

func (v cgroupVolume) ReadFile(name string) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("Is a directory")
	}
	if data, ok := v.files()[name]; ok {
		return []byte(data), nil
	}
	return nil, fs.ErrNotExist
}

func (v cgroupVolume) WriteFile(string, []byte, bool) error     { return images.ErrReadOnly }
func (v cgroupVolume) Mkdir(string, bool) error                 { return images.ErrReadOnly }
func (v cgroupVolume) Remove(string, bool) error                { return images.ErrReadOnly }
func (v cgroupVolume) Create(string, []byte, fs.FileMode) error { return images.ErrReadOnly }
func (v cgroupVolume) FSType(string) (int64, error)             { return images.Cgroup2Magic, nil }

func (v cgroupVolume) Stat(name string) (exists, isDir bool) {
	if name == "" {
		return true, true
	}
	_, ok := v.files()[name]
	return ok, false
}

func (v cgroupVolume) List(dir string) ([]string, error) {
	if dir != "" {
		if _, ok := v.files()[dir]; ok {
			return []string{dir}, nil
		}
		return nil, fs.ErrNotExist
	}
	var names []string
	for n := range v.files() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (v cgroupVolume) Files() []images.File {
	var out []images.File
	for n, data := range v.files() {
		out = append(out, images.File{Path: n, Size: int64(len(data))})
	}
	return out
}

// Info: cgroup files are root's, -rw-r--r--.
func (v cgroupVolume) Info(name string) (images.FileInfo, error) { return rootsFile(v.Stat(name)) }

// UpdateContainerResources gives a created or running container new
// cgroup settings (an in-place pod resize): its files show them at once.
func (s *Server) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is not running: %s", c.id, c.state)
	}
	res := req.GetLinux()
	if res == nil {
		return &runtimeapi.UpdateContainerResourcesResponse{}, nil
	}
	c.resources.set(res)
	if c.proc != nil {
		c.proc.sh.SetMemoryLimit(res.GetMemoryLimitInBytes())
	}
	s.log.Info("updated container resources", "container", c.config.GetMetadata().GetName(), "id", c.id,
		"cpuShares", res.GetCpuShares(), "cpuQuota", res.GetCpuQuota(), "memoryLimit", res.GetMemoryLimitInBytes())
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}
