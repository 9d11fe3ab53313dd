package cri

import (
	"slices"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// identity is who a container's process runs as, as containerd builds
// the OCI spec's process.user from the CRI security context and the
// image's files:
//
//   - the user: run_as_user (the pod's or container's runAsUser), else
//     run_as_username looked up in the image's /etc/passwd, else the
//     image's USER, root for every image of the catalog;
//   - the primary group: run_as_group (runAsGroup), else the user's
//     group in /etc/passwd, else 0;
//   - all groups: the primary one, those of /etc/group that list the user
//     as a member (unless supplementalGroupsPolicy is Strict), then
//     supplemental_groups (the pod's fsGroup and supplementalGroups).
//
// For example, `id` prints, with runAsUser 1001 and runAsGroup 2002,
// "uid=1001 gid=2002 groups=2002"; with runAsUser 65534 alone in
// busybox, "uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)".
func identity(sc *runtimeapi.LinuxContainerSecurityContext, fsys *images.FS) images.Identity {
	users := readIDFile(fsys, "/etc/passwd")
	var who images.Identity
	name := ""
	switch {
	case sc.GetRunAsUser() != nil:
		who.UID = uint32(sc.GetRunAsUser().GetValue())
	case sc.GetRunAsUsername() != "":
		name = sc.GetRunAsUsername()
	}
	var entry []string
	for _, u := range users {
		if (name != "" && u[0] == name) || (name == "" && u[2] == strconv.FormatUint(uint64(who.UID), 10)) {
			entry = u
			break
		}
	}
	if entry != nil {
		name = entry[0]
		if n, err := strconv.ParseUint(entry[2], 10, 32); err == nil {
			who.UID = uint32(n)
		}
		if len(entry) > 3 {
			if g, err := strconv.ParseUint(entry[3], 10, 32); err == nil {
				who.GID = uint32(g)
			}
		}
	}
	if sc.GetRunAsGroup() != nil {
		who.GID = uint32(sc.GetRunAsGroup().GetValue())
	}
	groups := []uint32{who.GID}
	if name != "" && sc.GetSupplementalGroupsPolicy() != runtimeapi.SupplementalGroupsPolicy_Strict {
		for _, g := range readIDFile(fsys, "/etc/group") {
			if len(g) > 3 && slices.Contains(strings.Split(g[3], ","), name) {
				if n, err := strconv.ParseUint(g[2], 10, 32); err == nil {
					groups = append(groups, uint32(n))
				}
			}
		}
	}
	for _, g := range sc.GetSupplementalGroups() {
		groups = append(groups, uint32(g))
	}
	who.Groups = dedupe(groups)
	return who
}

// readIDFile splits an /etc/passwd or /etc/group into its lines' fields.
func readIDFile(fsys *images.FS, name string) [][]string {
	data, err := fsys.ReadFile(name)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) >= 3 {
			out = append(out, f)
		}
	}
	return out
}

// dedupe keeps the first of each group.
func dedupe(gids []uint32) []uint32 {
	var out []uint32
	for _, g := range gids {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}
