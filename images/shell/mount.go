package shell

import (
	"context"
	"fmt"
	"io"
)

// mount [-t TYPE], without a device to mount, prints the mount table as
// busybox's does from /proc/mounts: the container's root, then each of
// its mounts, "<source> on <point> type <type> (<options>)", only those
// of TYPE with -t. `mount -t cgroup2` is how Kubernetes' tests ask
// whether the node runs cgroup v2 (a line for /sys/fs/cgroup says yes).
// Mounting anything is refused, as it is to a container without
// CAP_SYS_ADMIN.
func mountProgram(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	typ := ""
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-t" && i+1 < len(args):
			i++
			typ = args[i]
		default:
			fmt.Fprintln(p.Stderr, "mount: permission denied (are you root?)")
			return 1, nil
		}
	}
	for _, m := range p.FS.mountTable() {
		if typ == "" || m.fsType == typ {
			opts := "rw"
			if m.readOnly {
				opts = "ro"
			}
			fmt.Fprintf(out, "%s on %s type %s (%s,relatime)\n", m.source, m.at, m.fsType, opts)
		}
	}
	return 0, nil
}

type mountEntry struct {
	source, at, fsType string
	readOnly           bool
}

// mountTable is the root and the mounts, in the order they were made.
func (f *FS) mountTable() []mountEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []mountEntry{{source: "overlay", at: "/", fsType: "overlay", readOnly: f.readOnlyRoot}}
	for _, m := range f.mounts {
		magic, _ := m.vol.FSType("")
		name := fsTypeName(magic)
		out = append(out, mountEntry{source: name, at: m.at, fsType: name, readOnly: m.readOnly})
	}
	return out
}

// fsTypeName is the name /proc/mounts gives a filesystem of magic; the
// node's disk is taken for ext4.
func fsTypeName(magic int64) string {
	switch magic {
	case OverlayfsMagic:
		return "overlay"
	case TmpfsMagic:
		return "tmpfs"
	case Cgroup2Magic:
		return "cgroup2"
	}
	return "ext4"
}
