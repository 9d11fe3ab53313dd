package kubelet

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mkube/mkube/kubelet/envvars"
)

// A volumeMount may show a subdirectory of its volume: subPath names it,
// or subPathExpr, expanded with the container's environment, as
// `subPathExpr: $(POD_NAME)` gives each pod of a Deployment its own
// directory of a shared volume. The kubelet (makeMounts) checks the
// result and makes the directory if it is missing, before the container
// is created (package volumemanager's PrepareSubPaths, which calls
// subPathOf); a subPath it cannot use fails the container with
// CreateContainerConfigError, in Kubernetes' words.

// subPathOf is the subdirectory of its volume that mount m shows ("" for
// all of it). subPathExpr takes $(VAR) from env, the container's final
// environment, by Kubernetes' expansion rules (package envvars); a variable
// that is undefined or empty is an error, as the kubelet's
// ExpandContainerVolumeMounts says:
//
//	subPathExpr "logs/$(POD_NAME)", POD_NAME=web-1 = "logs/web-1"
//	subPathExpr "$(NOPE)"                          = missing value for NOPE
func subPathOf(m corev1.VolumeMount, env []corev1.EnvVar) (string, error) {
	sub := m.SubPath
	if m.SubPathExpr != "" {
		values := make(map[string]string, len(env))
		for _, e := range env {
			values[e.Name] = e.Value
		}
		missing := sets.New[string]()
		sub = envvars.Expand(m.SubPathExpr, func(name string) (string, bool) {
			if values[name] == "" {
				missing.Insert(name)
			}
			return values[name], true
		})
		if missing.Len() > 0 {
			return "", fmt.Errorf("missing value for %s", strings.Join(sets.List(missing), ", "))
		}
	}
	if sub == "" {
		return "", nil
	}
	// The API server refuses these in subPath and subPathExpr, but an
	// expansion can still make one.
	if path.IsAbs(sub) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	for _, part := range strings.Split(sub, "/") {
		if part == ".." {
			return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
		}
	}
	return sub, nil
}
