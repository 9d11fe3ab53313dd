package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestProbeDefaults(t *testing.T) {
	c := corev1.Container{Name: "c", Image: "nginx", LivenessProbe: &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}}
	defaultContainer(&c)
	p := c.LivenessProbe
	if p.TimeoutSeconds != 1 || p.PeriodSeconds != 10 || p.SuccessThreshold != 1 || p.FailureThreshold != 3 ||
		p.HTTPGet.Path != "/" || p.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("defaulted probe: %+v %+v", p, p.HTTPGet)
	}
}

// Kubernetes' validateProbe, field by field, with its messages.
func TestValidateProbes(t *testing.T) {
	exec := corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}
	valid := func() *corev1.Probe {
		return &corev1.Probe{ProbeHandler: exec, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	for _, tc := range []struct {
		name string
		c    corev1.Container
		init bool
		want string // the errors, "; "-joined, "" for none
	}{
		{name: "valid liveness", c: corev1.Container{LivenessProbe: valid()}},
		{name: "readiness may need several successes", c: corev1.Container{ReadinessProbe: func() *corev1.Probe { p := valid(); p.SuccessThreshold = 3; return p }()}},
		{name: "liveness needs one success", c: corev1.Container{LivenessProbe: func() *corev1.Probe { p := valid(); p.SuccessThreshold = 2; return p }()},
			want: `c.livenessProbe.successThreshold: Invalid value: 2: must be 1`},
		{name: "startup needs one success", c: corev1.Container{StartupProbe: func() *corev1.Probe { p := valid(); p.SuccessThreshold = 3; return p }()},
			want: `c.startupProbe.successThreshold: Invalid value: 3: must be 1`},
		{name: "no handler", c: corev1.Container{LivenessProbe: &corev1.Probe{SuccessThreshold: 1}},
			want: `c.livenessProbe: Required value: must specify a handler type`},
		{name: "two handlers", c: corev1.Container{ReadinessProbe: &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			Exec: exec.Exec, TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}},
			want: `c.readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type`},
		{name: "negative delay", c: corev1.Container{LivenessProbe: func() *corev1.Probe { p := valid(); p.InitialDelaySeconds = -1; return p }()},
			want: `c.livenessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0`},
		{name: "port out of range", c: corev1.Container{LivenessProbe: &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(70000)}}}},
			want: `c.livenessProbe.tcpSocket.port: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{name: "bad scheme", c: corev1.Container{LivenessProbe: &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http"), Scheme: "FTP"}}}},
			want: `c.livenessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`},
		{name: "grace on readiness", c: corev1.Container{ReadinessProbe: func() *corev1.Probe { p := valid(); p.TerminationGracePeriodSeconds = ptr.To[int64](5); return p }()},
			want: `c.readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes`},
		{name: "init container", init: true, c: corev1.Container{LivenessProbe: valid()},
			want: `c.livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always`},
		{name: "sidecar may", init: true, c: corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), LivenessProbe: valid()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range validateProbes(tc.c, tc.init, field.NewPath("c")) {
				got = append(got, e.Error())
			}
			if s := strings.Join(got, "; "); s != tc.want {
				t.Errorf("errors: %s\nwant    %s", s, tc.want)
			}
		})
	}
}
