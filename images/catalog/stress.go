package catalog

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/mkube/mkube/images/shell"
)

// stressImage is docker.io/polinux/stress, the image of the Kubernetes
// docs' memory and CPU tutorials: Alpine with stress 1.0.4 and
// CMD ["/usr/local/bin/stress"] (no ENTRYPOINT; the docs' Pods give
// command: ["stress"]).
func stressImage() Image {
	img := alpineImage()
	img.Cmd = []string{"/usr/local/bin/stress"}
	img.Env = append(img.Env, "STRESS_VERSION=1.0.4", "SHELL=/bin/bash")
	img.Programs = map[string]shell.Program{"stress": stress}
	return img
}

const stressUsage = "`stress' imposes certain types of compute stress on your system\n\n" +
	`Usage: stress [OPTION [ARG]] ...
 -?, --help         show this help statement
     --version      show version statement
 -v, --verbose      be verbose
 -q, --quiet        be quiet
 -n, --dry-run      show what would have been done
 -t, --timeout N    timeout after N seconds
     --backoff N    wait factor of N microseconds before work starts
 -c, --cpu N        spawn N workers spinning on sqrt()
 -i, --io N         spawn N workers spinning on sync()
 -m, --vm N         spawn N workers spinning on malloc()/free()
     --vm-bytes B   malloc B bytes per vm worker (default is 256MB)
     --vm-stride B  touch a byte every B bytes (default is 4096)
     --vm-hang N    sleep N secs before free (default none, 0 is inf)
     --vm-keep      redirty memory instead of freeing and reallocating
 -d, --hdd N        spawn N workers spinning on write()/unlink()
     --hdd-bytes B  write B bytes per hdd worker (default is 1GB)

Example: stress --cpu 8 --io 4 --vm 2 --vm-bytes 128M --timeout 10s

Note: Numbers may be suffixed with s,m,h,d,y (time) or B,K,M,G (size).
`

// stress holds --vm N workers' --vm-bytes each, from the start, and
// keeps --cpu N cores busy (in the cgroup's accounting, shell.CPU): a worker that frees
// and re-mallocs is, to the memory cgroup, always at its peak. Over the
// limit it is OOM-killed, 137, as in the docs' memory-demo-2 Pod. It then
// runs until --timeout (exit 0), or forever. It installs no handler for
// SIGTERM, and as PID 1 the kernel does not deliver a signal without one,
// so Terminate does nothing: the runtime kills it at the end of the grace
// period, 137, as happens to the real image.
func stress(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 {
		io.WriteString(out, stressUsage)
		return 0, nil
	}
	counts := map[string]int64{} // cpu, io, vm, hdd
	vmBytes := int64(256 << 20)
	var timeout time.Duration
	for i := 0; i < len(args); i++ {
		opt := args[i]
		value := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		var err error
		switch opt {
		case "-?", "--help":
			io.WriteString(out, stressUsage)
			return 0, nil
		case "--version":
			fmt.Fprintln(out, "stress 1.0.4")
			return 0, nil
		case "-v", "--verbose", "-q", "--quiet", "-n", "--dry-run", "--vm-keep":
		case "-c", "--cpu", "-i", "--io", "-m", "--vm", "-d", "--hdd":
			v, _ := value()
			counts[hogOf[opt]], err = strconv.ParseInt(v, 10, 64)
		case "--vm-bytes":
			v, _ := value()
			vmBytes, err = stressBytes(v)
		case "--vm-stride", "--hdd-bytes":
			v, _ := value()
			_, err = stressBytes(v)
		case "--vm-hang", "--backoff":
			v, _ := value()
			_, err = strconv.ParseInt(v, 10, 64)
		case "-t", "--timeout":
			v, _ := value()
			timeout, err = stressSeconds(v)
		default:
			fmt.Fprintf(p.Stderr, "stress: FAIL: [1] unrecognized option: %s\n", opt)
			return 1, nil
		}
		if err != nil {
			fmt.Fprintf(p.Stderr, "stress: FAIL: [1] invalid number in %s\n", opt)
			return 1, nil
		}
	}
	fmt.Fprintf(out, "stress: info: [1] dispatching hogs: %d cpu, %d io, %d vm, %d hdd\n",
		counts["cpu"], counts["io"], counts["vm"], counts["hdd"])
	start := p.Clock.Now()
	if err := p.UseMemory(counts["vm"] * vmBytes); err != nil {
		return 137, err
	}
	// Each --cpu worker spins on sqrt(): a core apiece, in the accounting.
	release := p.CPU().Use(counts["cpu"] * 1000)
	defer release()
	hogs := counts["cpu"] + counts["io"] + counts["vm"] + counts["hdd"]
	var done <-chan time.Time // nil, never: no timeout
	if timeout > 0 || hogs == 0 {
		done = p.Clock.After(timeout)
	}
	select {
	case <-ctx.Done():
		return 137, ctx.Err()
	case <-done:
	}
	p.UseMemory(0)
	fmt.Fprintf(out, "stress: info: [1] successful run completed in %ds\n", int(p.Clock.Since(start).Seconds()))
	return 0, nil
}

// hogOf names the kind of worker an option asks for.
var hogOf = map[string]string{"-c": "cpu", "--cpu": "cpu", "-i": "io", "--io": "io",
	"-m": "vm", "--vm": "vm", "-d": "hdd", "--hdd": "hdd"}

// stressBytes reads a size as stress does: a B, K, M or G suffix (either
// case) multiplies by a power of 1024.
func stressBytes(s string) (int64, error) {
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'b', 'B':
			s = s[:len(s)-1]
		case 'k', 'K':
			mult, s = 1<<10, s[:len(s)-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:len(s)-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// stressSeconds reads a duration as stress does: seconds, or an s, m, h,
// d or y suffix.
func stressSeconds(s string) (time.Duration, error) {
	unit := time.Second
	if s != "" {
		if u, ok := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour,
			'd': 24 * time.Hour, 'y': 365 * 24 * time.Hour}[s[len(s)-1]]; ok {
			unit, s = u, s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return time.Duration(n) * unit, err
}
