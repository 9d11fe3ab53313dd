package images

import "github.com/mkube/mkube/images/shell"

// A container's filesystem crosses the boundary whole, the one wide
// dependency: the runtime fills it (the image's files, /etc/hostname,
// /etc/resolv.conf), mounts the volumes it implements into it (Volume:
// the node's directories, tmpfs, the cgroup, an image), and reads back
// what the process wrote (its writable layer for stats, its files for
// inspection), while the process and every command exec'd beside it
// share it.

// FS is a container's in-memory filesystem.
type FS = shell.FS

// NewFS is a filesystem with the directories every image has.
func NewFS() *FS { return shell.NewFS() }

// Volume is what a mount is to FS: a directory the runtime provides.
// File and FileInfo are what its Files and Info return.
type (
	Volume   = shell.Volume
	File     = shell.File
	FileInfo = shell.FileInfo
)

// What a Volume's writes fail with, in the kernel's words: EROFS on a
// read-only mount, ENOSPC on a full one.
var (
	ErrReadOnly = shell.ErrReadOnly
	ErrNoSpace  = shell.ErrNoSpace
)

// statfs(2)'s f_type of the filesystems the runtime mounts.
const (
	OverlayfsMagic = shell.OverlayfsMagic // the container's root
	TmpfsMagic     = shell.TmpfsMagic     // the memory-backed mounts (emptyDir medium Memory)
	Cgroup2Magic   = shell.Cgroup2Magic   // /sys/fs/cgroup
)
