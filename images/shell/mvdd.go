package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// mv and dd, as busybox has them, for the file dances of Kubernetes'
// StatefulSet specs: `mv -v /localhost.crt /tmp/` breaks a pod's HTTP
// readiness probe (and `mv -v /tmp/localhost.crt /` restores it), and
// `dd if=/dev/zero of=/data/statefulset-continue bs=1 count=1 conv=fsync`
// lets a paused pod's exec probe (`test -f ...`) pass.

// mv [-f] [-v] SOURCE... DEST renames files; DEST may be a directory.
// mkube's filesystem moves files, not whole directories.
func mv(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	set, names := flags(args, "fv")
	if len(names) < 2 {
		fmt.Fprintln(p.Stderr, "Usage: mv [-fv] SOURCE DEST\nor: mv [-fv] SOURCE... DIRECTORY")
		return 1, nil
	}
	dest := names[len(names)-1]
	_, destIsDir := p.FS.Stat(dest)
	if len(names) > 2 && !destIsDir {
		fmt.Fprintf(p.Stderr, "mv: '%s' is not a directory\n", dest)
		return 1, nil
	}
	code := 0
	for _, src := range names[:len(names)-1] {
		to := dest
		if destIsDir {
			to = path.Join(dest, path.Base(src))
		}
		if err := moveFile(p.FS, src, to); err != nil {
			fmt.Fprintf(p.Stderr, "mv: can't rename '%s': %s\n", src, describe(err))
			code = 1
			continue
		}
		if set['v'] {
			fmt.Fprintf(out, "'%s' -> '%s'\n", src, to)
		}
	}
	return code, nil
}

// moveFile is rename(2) for a file: the content goes to, the source goes.
func moveFile(f *FS, from, to string) error {
	if exists, isDir := f.Stat(from); exists && isDir {
		return fmt.Errorf("Is a directory (mkube's mv moves files only)")
	}
	data, err := f.ReadFile(from)
	if err != nil {
		return err
	}
	if err := f.writable(to); err != nil {
		return err
	}
	if err := f.writable(from); err != nil {
		return err
	}
	f.WriteFile(to, data)
	return f.Remove(from, false)
}

// dd [if=FILE] [of=FILE] [bs=N] [count=N] [conv=...] copies count blocks
// of bs bytes (all of the input without count) from if (stdin) to of
// (stdout); /dev/zero gives zeros (and /dev/urandom too: the bytes
// are not random), endlessly without count. conv=fsync has nothing to flush here.
// Like busybox it reports the records on stderr.
func dd(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	opts := map[string]string{"bs": "512"}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(p.Stderr, "dd: invalid argument '%s'\n", a)
			return 1, nil
		}
		opts[k] = v
	}
	bs, err := strconv.Atoi(opts["bs"])
	if err != nil || bs <= 0 {
		fmt.Fprintf(p.Stderr, "dd: invalid number '%s'\n", opts["bs"])
		return 1, nil
	}
	count := -1
	if c, ok := opts["count"]; ok {
		if count, err = strconv.Atoi(c); err != nil || count < 0 {
			fmt.Fprintf(p.Stderr, "dd: invalid number '%s'\n", c)
			return 1, nil
		}
	}
	var data []byte
	switch src := opts["if"]; src {
	case "":
		if data, err = io.ReadAll(p.stdin(ctx)); err != nil && ctx.Err() != nil {
			return 137, ctx.Err()
		}
	case "/dev/zero", "/dev/urandom":
		if count < 0 { // endless: a busy core until killed (hogs.go)
			return 137, p.Spin(ctx)
		}
		data = bytes.Repeat([]byte{0}, bs*count)
	default:
		if data, err = p.FS.ReadFile(src); err != nil {
			fmt.Fprintf(p.Stderr, "dd: can't open '%s': %s\n", src, describe(err))
			return 1, nil
		}
	}
	if count >= 0 && len(data) > bs*count {
		data = data[:bs*count]
	}
	if dst := opts["of"]; dst != "" {
		if err := p.FS.writable(dst); err != nil {
			fmt.Fprintf(p.Stderr, "dd: can't open '%s': %s\n", dst, describe(err))
			return 1, nil
		}
		p.FS.WriteFile(dst, data)
	} else if _, err := out.Write(data); writeStatus(p, "dd", err) != 0 {
		return 1, nil
	}
	full, partial := len(data)/bs, 0
	if len(data)%bs != 0 {
		partial = 1
	}
	fmt.Fprintf(p.Stderr, "%d+%d records in\n%d+%d records out\n", full, partial, full, partial)
	return 0, nil
}
