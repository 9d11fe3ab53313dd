package shell

import (
	"errors"
	"slices"
	"sync"
)

// What a process holds besides its output: memory, which a container's
// limit bounds, and the ports it listens on, which probes and Services
// reach. Programs of the image (stress, nginx...) set them; the runtime
// reads them.

// ErrOOMKilled is what Exec returns when the process used more memory
// than its limit: the kernel's OOM killer ended it with SIGKILL (exit
// 137), and the runtime reports the reason "OOMKilled".
var ErrOOMKilled = errors.New("OOM killed")

// resources are guarded by their own lock: the runtime reads them while
// the process runs.
type resources struct {
	mu        sync.Mutex
	limit     int64   // bytes; 0 is no limit
	memory    int64   // bytes in use
	listening []int32 // TCP
	bound     []int32 // UDP
}

// UseMemory sets how much memory the process holds now. Above the limit
// it returns ErrOOMKilled, which the program returns to end the process.
func (p *Process) UseMemory(bytes int64) error {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	p.res.memory = bytes
	if p.res.limit > 0 && bytes > p.res.limit {
		return ErrOOMKilled
	}
	return nil
}

// SetMemoryLimit changes the process's memory limit (an in-place
// resize): its next allocation is judged by it.
func (p *Process) SetMemoryLimit(bytes int64) {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	p.res.limit = bytes
}

// MemoryUsage is the memory the process holds, in bytes.
func (p *Process) MemoryUsage() int64 {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	return p.res.memory
}

// Listen opens a TCP port: the process accepts connections on it.
func (p *Process) Listen(port int32) {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	if !slices.Contains(p.res.listening, port) {
		p.res.listening = append(p.res.listening, port)
	}
}

// Listening reports whether the process accepts connections on port.
func (p *Process) Listening(port int32) bool {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	return slices.Contains(p.res.listening, port)
}

// ListenUDP binds a UDP port: datagrams to it reach the process.
func (p *Process) ListenUDP(port int32) {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	if !slices.Contains(p.res.bound, port) {
		p.res.bound = append(p.res.bound, port)
	}
}

// ListeningUDP reports whether the process has bound the UDP port.
func (p *Process) ListeningUDP(port int32) bool {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	return slices.Contains(p.res.bound, port)
}

// Ports are the TCP ports the process listens on, in increasing order.
func (p *Process) Ports() []int32 {
	p.res.mu.Lock()
	defer p.res.mu.Unlock()
	out := slices.Clone(p.res.listening)
	slices.Sort(out)
	return out
}
