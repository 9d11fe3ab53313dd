package shell

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Identity is who a process runs as: its user, its primary group and
// all its groups (getgroups(2)), which the runtime sets from the
// container's securityContext (runAsUser, runAsGroup, supplementalGroups)
// and the image's /etc/passwd and /etc/group. The zero Identity is root.
type Identity struct {
	UID, GID uint32
	Groups   []uint32
}

// id [-u|-g|-G] [-n] is busybox's: who the process is, by number and,
// where the image's /etc/passwd and /etc/group name them, by name:
//
//	uid=1001 gid=2002 groups=2002
//	uid=0(root) gid=0(root) groups=0(root),10(wheel)
//
// -u, -g and -G print only the user, the group or all groups (space
// separated), as numbers, or as names with -n.
func id(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	set, rest := flags(args, "ugGnr")
	if len(rest) > 0 {
		fmt.Fprintf(p.Stderr, "id: unknown user %s\n", rest[0])
		return 1, nil
	}
	users, groups := p.names("/etc/passwd"), p.names("/etc/group")
	who := p.Identity
	gids := who.Groups
	if len(gids) == 0 {
		gids = []uint32{who.GID}
	}
	one := func(n uint32, names map[uint32]string) string {
		if set['n'] {
			if name, ok := names[n]; ok {
				return name
			}
		}
		return strconv.FormatUint(uint64(n), 10)
	}
	named := func(n uint32, names map[uint32]string) string {
		if name, ok := names[n]; ok {
			return fmt.Sprintf("%d(%s)", n, name)
		}
		return strconv.FormatUint(uint64(n), 10)
	}
	switch {
	case set['u']:
		fmt.Fprintln(out, one(who.UID, users))
	case set['g']:
		fmt.Fprintln(out, one(who.GID, groups))
	case set['G']:
		words := make([]string, len(gids))
		for i, g := range gids {
			words[i] = one(g, groups)
		}
		fmt.Fprintln(out, strings.Join(words, " "))
	default:
		words := make([]string, len(gids))
		for i, g := range gids {
			words[i] = named(g, groups)
		}
		fmt.Fprintf(out, "uid=%s gid=%s groups=%s\n", named(who.UID, users), named(who.GID, groups), strings.Join(words, ","))
	}
	return 0, nil
}

// names reads an /etc/passwd or /etc/group of the process's filesystem:
// name by id (the third field of each "name:x:id:..." line).
func (p *Process) names(file string) map[uint32]string {
	out := map[uint32]string{}
	data, err := p.FS.ReadFile(file)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 3 {
			continue
		}
		if n, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			if _, seen := out[uint32(n)]; !seen {
				out[uint32(n)] = f[0]
			}
		}
	}
	return out
}
