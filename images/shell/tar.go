package shell

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// tarProgram is tar, what `kubectl cp` runs in the container: kubectl has no file
// API to call, so it execs tar and streams the archive through exec's
// stdin or stdout.
//
//	kubectl cp web:/tmp/report ./report   runs  tar cf - /tmp/report
//	kubectl cp ./notes web:/tmp/notes     runs  tar -xmf - -C /tmp
//
// It knows c (create), x (extract) and t (list), with f FILE ("-" is
// stdin or stdout), C DIR, v, and the flags kubectl adds (m,
// --no-same-owner, --no-same-permissions), which change nothing in a
// filesystem without times or owners. Names are stored relative, as tar
// does: it drops the leading "/" and says so on stderr.
func tarProgram(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	t, err := parseTar(args)
	if err != nil {
		fmt.Fprintf(p.Stderr, "tar: %v\n", err)
		return 2, nil
	}
	if exists, isDir := p.FS.Stat(t.dir); !exists || !isDir {
		p.tarError("%s: Cannot open: No such file or directory", "can't change directory to '%s': No such file or directory", t.dir)
		return 2, nil
	}
	switch t.mode {
	case 'c':
		return p.tarCreate(t, out)
	default:
		return p.tarRead(ctx, t, out)
	}
}

// tarArgs is one tar command line.
type tarArgs struct {
	mode    byte     // 'c', 'x' or 't'
	file    string   // the archive: "-" is stdin or stdout
	dir     string   // -C: where names are relative to
	verbose bool     // -v: name each member
	paths   []string // what to archive (c) or extract (x, t; all if none)
}

// parseTar reads tar's flags, in the old style ("xmf -", "cf -") or the
// short one ("-xmf -", "-C /tmp"), and the long flags kubectl passes.
func parseTar(args []string) (tarArgs, error) {
	t := tarArgs{file: "-", dir: "/"}
	var wantArg []byte // the flags whose argument comes next, in order
	for i, a := range args {
		switch {
		case len(wantArg) > 0:
			if wantArg[0] == 'f' {
				t.file = a
			} else {
				t.dir = a
			}
			wantArg = wantArg[1:]
		case strings.HasPrefix(a, "--"):
			switch a {
			case "--no-same-owner", "--no-same-permissions", "--touch", "--verbose":
				t.verbose = t.verbose || a == "--verbose"
			default:
				return t, fmt.Errorf("unrecognized option '%s'", a)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 || i == 0:
			for _, c := range []byte(strings.TrimPrefix(a, "-")) {
				switch c {
				case 'c', 'x', 't':
					if t.mode != 0 && t.mode != c {
						return t, errors.New("You may not specify more than one '-Acdtrux' option")
					}
					t.mode = c
				case 'f', 'C':
					wantArg = append(wantArg, c)
				case 'v':
					t.verbose = true
				case 'm', 'o', 'p':
				case 'z', 'j', 'J':
					return t, fmt.Errorf("-%c: compression is not simulated", c)
				default:
					return t, fmt.Errorf("invalid option -- '%c'", c)
				}
			}
		default:
			t.paths = append(t.paths, a)
		}
	}
	switch {
	case len(wantArg) > 0:
		return t, fmt.Errorf("option requires an argument -- '%c'", wantArg[0])
	case t.mode == 0:
		return t, errors.New("You must specify one of the '-Acdtrux' options")
	case t.mode == 'c' && len(t.paths) == 0:
		return t, errors.New("Cowardly refusing to create an empty archive")
	}
	return t, nil
}

// tarError prints an error as the image's tar words it: GNU tar's, or
// busybox's.
func (p *Process) tarError(gnu, busybox string, args ...any) {
	format := gnu
	if p.busybox() {
		format = busybox
	}
	fmt.Fprintf(p.Stderr, "tar: "+format+"\n", args...)
}

// tarCreate writes the archive of t.paths, directories with all they
// hold, to stdout or t.file.
func (p *Process) tarCreate(t tarArgs, out io.Writer) (int, error) {
	var file bytes.Buffer
	if t.file != "-" {
		out = &file
	}
	w := tar.NewWriter(out)
	now := p.Clock.Now()
	code, warned := 0, false
	var add func(name string) error
	add = func(name string) error {
		abs := path.Join(t.dir, name)
		exists, isDir := p.FS.Stat(abs)
		if !exists {
			p.tarError("%s: Cannot stat: No such file or directory", "%s: No such file or directory", name)
			code = 2
			return nil
		}
		member := strings.TrimLeft(path.Clean(name), "/")
		if member != path.Clean(name) && !warned {
			p.tarError("Removing leading `/' from member names", "removing leading '/' from member names")
			warned = true
		}
		if t.verbose {
			fmt.Fprintln(p.Stderr, name) // stdout is the archive
		}
		if isDir {
			if member != "" {
				if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: member + "/", Mode: 0o755, ModTime: now, Uname: "root", Gname: "root"}); err != nil {
					return err
				}
			}
			names, _ := p.FS.List(abs)
			for _, n := range names {
				if err := add(path.Join(name, n)); err != nil {
					return err
				}
			}
			return nil
		}
		data, err := p.FS.ReadFile(abs)
		if err != nil {
			return nil // removed meanwhile
		}
		if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: member, Size: int64(len(data)), Mode: 0o644, ModTime: now, Uname: "root", Gname: "root"}); err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	for _, name := range t.paths {
		if err := add(name); err != nil {
			return 2, nil // stdout went away: tar dies of SIGPIPE's EPIPE
		}
	}
	if err := w.Close(); err != nil {
		return 2, nil
	}
	if t.file != "-" {
		p.FS.WriteFile(path.Join(t.dir, t.file), file.Bytes())
	}
	if code != 0 && !p.busybox() {
		fmt.Fprintln(p.Stderr, "tar: Exiting with failure status due to previous errors")
	}
	return code, nil
}

// tarRead extracts (x) or lists (t) the archive on stdin or in t.file.
// A member's name is put under t.dir whatever it says ("../../etc/x"
// stays inside it), as GNU tar refuses to go above the directory.
func (p *Process) tarRead(ctx context.Context, t tarArgs, out io.Writer) (int, error) {
	in := p.stdin(ctx)
	if t.file != "-" {
		data, err := p.FS.ReadFile(path.Join(t.dir, t.file))
		if err != nil {
			p.tarError("%s: Cannot open: No such file or directory", "can't open '%s': No such file or directory", t.file)
			return 2, nil
		}
		in = bytes.NewReader(data)
	}
	r := tar.NewReader(in)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return 137, ctx.Err()
			}
			p.tarError("This does not look like a tar archive", "invalid tar magic")
			return 2, nil
		}
		if !t.wanted(h.Name) {
			continue
		}
		if t.verbose || t.mode == 't' {
			fmt.Fprintln(out, h.Name)
		}
		if t.mode == 't' {
			continue
		}
		dest := path.Join(t.dir, clean(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			p.FS.Mkdir(dest, true)
		case tar.TypeReg:
			data, err := io.ReadAll(r)
			if err != nil {
				if ctx.Err() != nil {
					return 137, ctx.Err()
				}
				p.tarError("Unexpected EOF in archive", "short read")
				return 2, nil
			}
			p.FS.WriteFile(dest, data)
		default:
			// Links and devices have no place in a filesystem of files
			// and directories: skipped, as tar skips what it cannot make.
		}
	}
}

// wanted says whether member name is one of the paths asked for (all if
// none): the path itself or something under it.
func (t tarArgs) wanted(name string) bool {
	if len(t.paths) == 0 {
		return true
	}
	name = strings.Trim(name, "/")
	for _, want := range t.paths {
		want = strings.Trim(want, "/")
		if name == want || strings.HasPrefix(name, want+"/") {
			return true
		}
	}
	return false
}
