package catalog

import (
	"context"
	"fmt"
	"io"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// stdPath is the PATH the Debian and Alpine based images set.
const stdPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// fileEnv is the official images' file_env: NAME, or else the content of
// the file NAME_FILE names, which is how a Secret mounted as a file
// passes a password.
func fileEnv(p *shell.Process, name string) string {
	if v := p.Getenv(name); v != "" {
		return v
	}
	if f := p.Getenv(name + "_FILE"); f != "" {
		if data, err := p.FS.ReadFile(f); err == nil {
			return string(data)
		}
	}
	return ""
}

// The base images run a shell. With no stdin (a container has none unless
// stdin: true), `sh` and `bash` read end-of-file and exit 0 at once: why a
// bare busybox Pod goes Completed, then CrashLoopBackOff.

func busyboxImage() Image {
	return Image{Cmd: []string{"sh"}, Env: []string{"PATH=" + stdPath},
		Files: map[string]string{
			"/bin/busybox": "", // its sh is busybox's ash: the shell prompts "/ # " (images/shell/interactive.go)
			"/etc/passwd":  "root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n",
			"/etc/group":   "root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n",
		}}
}

func alpineImage() Image {
	return Image{Cmd: []string{"/bin/sh"}, Env: []string{"PATH=" + stdPath},
		Files: map[string]string{
			"/bin/busybox":        "", // Alpine's sh is busybox's too
			"/etc/alpine-release": "3.21.0\n",
			"/etc/os-release": `NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.21.0
PRETTY_NAME="Alpine Linux v3.21"
HOME_URL="https://alpinelinux.org/"
BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"
`,
		}}
}

const ubuntuRelease = `PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
UBUNTU_CODENAME=noble
`

const debianRelease = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`

// bashImage is ubuntu or debian: CMD ["/bin/bash"], which is the shell.
func bashImage(osRelease string) Image {
	return Image{Cmd: []string{"/bin/bash"}, Env: []string{"PATH=" + stdPath},
		Files: map[string]string{"/etc/os-release": osRelease}}
}

// pauseImage is the sandbox's infra container. pause.c installs handlers
// for SIGINT and SIGTERM precisely because it is PID 1 (which the kernel
// spares from signals it does not handle): on one it prints psignal's
// line to stderr and exits 0.
func pauseImage() Image {
	pause := func(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
		if len(args) > 0 && args[0] == "-v" {
			fmt.Fprintln(out, "pause.c v3.10")
			return 0, nil
		}
		if err := lib.ListenUntilStopped(ctx, p); err != nil {
			return 137, err
		}
		fmt.Fprintln(p.Stderr, "Shutting down, got signal: Terminated")
		return 0, nil
	}
	return Image{Entrypoint: []string{"/pause"}, Programs: map[string]shell.Program{"pause": pause}}
}
