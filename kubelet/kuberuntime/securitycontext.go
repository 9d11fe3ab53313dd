package kuberuntime

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerSecurityContext is what the kubelet tells the runtime about
// who a container runs as and what it may do (kuberuntime's
// determineEffectiveSecurityContext): the container's securityContext
// where it says something, else the pod's:
//
//   - run_as_user and run_as_group: runAsUser and runAsGroup, the
//     container's over the pod's;
//   - supplemental_groups: the pod's fsGroup, then its
//     supplementalGroups, which the runtime adds to the user's groups of
//     the image (supplementalGroupsPolicy Merge) or not (Strict);
//   - readonly_rootfs: readOnlyRootFilesystem; privileged: privileged;
//     no_new_privs: allowPrivilegeEscalation false.
//
// A pod's runAsUser 1001 with its container's 1002 runs it as 1002.
func containerSecurityContext(pod *corev1.Pod, c corev1.Container) *runtimeapi.LinuxContainerSecurityContext {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	csc := c.SecurityContext
	if csc == nil {
		csc = &corev1.SecurityContext{}
	}
	out := &runtimeapi.LinuxContainerSecurityContext{}
	if u := firstSet(csc.RunAsUser, psc.RunAsUser); u != nil {
		out.RunAsUser = &runtimeapi.Int64Value{Value: *u}
	}
	if g := firstSet(csc.RunAsGroup, psc.RunAsGroup); g != nil {
		out.RunAsGroup = &runtimeapi.Int64Value{Value: *g}
	}
	if psc.FSGroup != nil {
		out.SupplementalGroups = append(out.SupplementalGroups, *psc.FSGroup)
	}
	out.SupplementalGroups = append(out.SupplementalGroups, psc.SupplementalGroups...)
	if psc.SupplementalGroupsPolicy != nil && *psc.SupplementalGroupsPolicy == corev1.SupplementalGroupsPolicyStrict {
		out.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy_Strict
	}
	out.ReadonlyRootfs = csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem
	out.Privileged = csc.Privileged != nil && *csc.Privileged
	out.NoNewPrivs = csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation
	return out
}

// firstSet is the first of ids that is set, or nil.
func firstSet(ids ...*int64) *int64 {
	for _, id := range ids {
		if id != nil {
			return id
		}
	}
	return nil
}
