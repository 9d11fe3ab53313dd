package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// DefaultTolerationSeconds: a pod stays 300 s on a node that turns
// not-ready or unreachable before the taint eviction controller moves it
// (seed 003 §6.5), unless it tolerates those taints in its own way.
var DefaultTolerationSeconds = Plugin{Name: "DefaultTolerationSeconds", Admit: admitDefaultTolerationSeconds}

// defaultTolerationSeconds is kube-apiserver's
// --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds.
const defaultTolerationSeconds int64 = 300

func admitDefaultTolerationSeconds(_ context.Context, a *Attributes, _ Objects) error {
	if !isPodWrite(a) {
		return nil
	}
	spec := &a.Object.(*corev1.Pod).Spec
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		found := false
		for _, t := range spec.Tolerations {
			if (t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)) &&
				(t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute) {
				found = true
			}
		}
		if !found {
			seconds := defaultTolerationSeconds
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: &seconds,
			})
		}
	}
	return nil
}
