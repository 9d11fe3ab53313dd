// Package mounttable is a simulated node's mount table, its /proc/mounts.
// On a real node the kubelet mounts a tmpfs over an emptyDir of medium
// Memory (mount -t tmpfs -o size=N tmpfs DIR), the kernel records it,
// and the container runtime, bind-mounting DIR into a container, gets
// the tmpfs. An mkube node is a directory that its kubelet and its
// runtime share (maybe from two processes), so the kernel's record is a
// file on it: the kubelet "mounts" by adding a line, the runtime reads
// the lines to learn what is mounted where, and how large:
//
//	tmpfs /var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~empty-dir/cache tmpfs rw,size=1048576 0 0
//
// The format is /proc/mounts' (fstab(5)): source, mount point, type,
// options, dump, pass, with space, tab, newline and backslash escaped in
// octal (\040). The kernel prints size in KiB (size=1024k); the line
// keeps the bytes the kubelet asked for, so a sizeLimit of 1500 stays
// exact.
package mounttable

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Path is where the table is on the node, node-absolute.
const Path = "/proc/mounts"

// Mount is one line of the table.
type Mount struct {
	Source string // "tmpfs"
	Point  string // the mount point, a clean node-absolute path
	Type   string // "tmpfs"
	Size   int64  // bytes, the size= option; 0 if none (no limit)
}

// writeMu serializes this process's changes of any table: a kubelet's
// workers set up several pods of a node at once. Readers in other
// processes see whole tables, as each change is written by rename.
var writeMu sync.Mutex

// file is the table of the node whose "/" is root on the real machine.
func file(root string) string { return filepath.Join(root, filepath.FromSlash(Path)) }

// Read is the table of the node whose "/" is root; none if it has none.
func Read(root string) ([]Mount, error) {
	data, err := os.ReadFile(file(root))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	return Parse(data), nil
}

// Add mounts m: it replaces a mount at the same point (mounting again
// there, as the kubelet's SetUp does on every sync, is harmless) and
// writes nothing if the table has m already.
func Add(root string, m Mount) error {
	m.Point = path.Clean("/" + m.Point)
	return change(root, func(ms []Mount) []Mount {
		out := []Mount{}
		for _, old := range ms {
			if old.Point != m.Point {
				out = append(out, old)
			}
		}
		return append(out, m)
	})
}

// RemoveUnder unmounts dir and every mount below it: a pod's directory
// when the pod is gone.
func RemoveUnder(root, dir string) error {
	dir = path.Clean("/" + dir)
	return change(root, func(ms []Mount) []Mount {
		out := []Mount{}
		for _, m := range ms {
			if m.Point != dir && !strings.HasPrefix(m.Point, strings.TrimSuffix(dir, "/")+"/") {
				out = append(out, m)
			}
		}
		return out
	})
}

// Under is the mount that holds the node path p (the deepest one, as
// the kernel resolves it) and p relative to its mount point ("" for the
// point itself).
func Under(ms []Mount, p string) (Mount, string, bool) {
	p = path.Clean("/" + p)
	var best Mount
	found := false
	for _, m := range ms {
		if p == m.Point || strings.HasPrefix(p, strings.TrimSuffix(m.Point, "/")+"/") {
			if !found || len(m.Point) > len(best.Point) {
				best, found = m, true
			}
		}
	}
	if !found {
		return Mount{}, "", false
	}
	return best, strings.TrimPrefix(strings.TrimPrefix(p, best.Point), "/"), true
}

// change rewrites the table with edit, if that changes it.
func change(root string, edit func([]Mount) []Mount) error {
	writeMu.Lock()
	defer writeMu.Unlock()
	ms, err := Read(root)
	if err != nil {
		return err
	}
	old, next := Format(ms), Format(edit(ms))
	if bytes.Equal(old, next) {
		return nil
	}
	name := file(root)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("write mount table: %w", err)
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, next, 0o644); err != nil {
		return fmt.Errorf("write mount table: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return fmt.Errorf("write mount table: %w", err)
	}
	return nil
}

// Parse reads a table; a line it cannot read is skipped, as it names no
// mount this package made.
func Parse(data []byte) []Mount {
	var out []Mount
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		m := Mount{Source: unescape(f[0]), Point: unescape(f[1]), Type: unescape(f[2])}
		if !path.IsAbs(m.Point) {
			continue
		}
		m.Point = path.Clean(m.Point)
		for _, opt := range strings.Split(f[3], ",") {
			if v, ok := strings.CutPrefix(opt, "size="); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
					m.Size = n
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// Format writes a table, one line a mount.
func Format(ms []Mount) []byte {
	var b bytes.Buffer
	for _, m := range ms {
		opts := "rw"
		if m.Size > 0 {
			opts += ",size=" + strconv.FormatInt(m.Size, 10)
		}
		fmt.Fprintf(&b, "%s %s %s %s 0 0\n", escape(m.Source), escape(m.Point), escape(m.Type), opts)
	}
	return b.Bytes()
}

// The characters fstab(5) writes in octal, so that fields stay split at
// blanks.
var (
	escaper   = strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`)
	unescaper = strings.NewReplacer(`\134`, `\`, `\040`, " ", `\011`, "\t", `\012`, "\n")
)

func escape(s string) string {
	if s == "" {
		return "none" // a field is never empty, or the line would shift
	}
	return escaper.Replace(s)
}

func unescape(s string) string { return unescaper.Replace(s) }
