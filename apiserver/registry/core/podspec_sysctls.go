package core

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A sysctl name is dot- (or slash-) separated segments of lower-case
// letters, digits, '-' and '_', at most 253 characters (Kubernetes'
// IsValidSysctlName).
const (
	sysctlSegment   = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlMaxLength = 253
)

var (
	sysctlName = regexp.MustCompile("^(" + sysctlSegment + "[\\./])*" + sysctlSegment + "$")
	netSysctl  = regexp.MustCompile(`^net[./]`)
	ipcSysctl  = regexp.MustCompile(`^(kernel[./](shm|msg|sem)|fs[./]mqueue[./])`)
)

// validateSysctls is Kubernetes' validateSysctls: each name valid and
// given once; a network sysctl not with hostNetwork, an IPC one not with
// hostIPC. Which sysctls a node allows is the kubelet's to judge.
func validateSysctls(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	if spec.SecurityContext == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, s := range spec.SecurityContext.Sysctls {
		p := path.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlName.MatchString(s.Name):
			errs = append(errs, field.Invalid(p, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlName)))
		case seen[s.Name]:
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		switch ns := sysctlNamespace(s.Name); {
		case spec.HostNetwork && ns == "net":
			errs = append(errs, field.Invalid(p, s.Name, "may not be specified when 'hostNetwork' is true"))
		case spec.HostIPC && ns == "ipc":
			errs = append(errs, field.Invalid(p, s.Name, "may not be specified when 'hostIPC' is true"))
		}
		seen[s.Name] = true
	}
	return errs
}

// sysctlNamespace is the Linux namespace a sysctl belongs to, as
// component-helpers' GetNamespace: net.*, and kernel.shm*, kernel.msg*,
// kernel.sem, fs.mqueue.* for IPC.
func sysctlNamespace(name string) string {
	switch {
	case netSysctl.MatchString(name):
		return "net"
	case ipcSysctl.MatchString(name):
		return "ipc"
	}
	return ""
}
