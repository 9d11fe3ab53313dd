package kubelet

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzParseTaints: what --register-with-taints accepts prints back (as
// kubectl prints taints) to something that parses to the same taints.
func FuzzParseTaints(f *testing.F) {
	for _, s := range []string{"key1=value1:NoSchedule", "node-role.kubernetes.io/master:NoSchedule,k=v:NoExecute", "a=:PreferNoSchedule", ",,", "k=v=w:NoSchedule", "k:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		taints, err := ParseTaints(s)
		if err != nil {
			return
		}
		printed := make([]string, len(taints))
		for i, taint := range taints {
			printed[i] = taint.ToString()
		}
		again, err := ParseTaints(strings.Join(printed, ","))
		if err != nil || !slices.EqualFunc(taints, again, func(a, b corev1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value }) {
			t.Fatalf("%q parsed to %v, printed %q, parsed again to %v (%v)", s, taints, printed, again, err)
		}
	})
}

// FuzzParseLabels: what --labels accepts prints back to the same labels.
func FuzzParseLabels(f *testing.F) {
	for _, s := range []string{"myname=scj", "a=b,c=d", "example.com/x=", "=v", "k=v,k=w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		labels, err := ParseLabels(s)
		if err != nil {
			return
		}
		var printed []string
		for k, v := range labels {
			printed = append(printed, k+"="+v)
		}
		again, err := ParseLabels(strings.Join(printed, ","))
		if err != nil || !maps.Equal(labels, again) {
			t.Fatalf("%q parsed to %v, printed %q, parsed again to %v (%v)", s, labels, printed, again, err)
		}
	})
}
