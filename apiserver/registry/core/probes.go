package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// A container's liveness, readiness and startup probes: Kubernetes'
// defaults (SetDefaults_Probe, SetDefaults_HTTPGetAction) and the rules
// of its validateProbe, with its messages, so that `kubectl apply` of a
// bad probe is refused as a real API server refuses it.

var probeSchemes = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)

// defaultProbe fills in what a probe leaves out: every 10 s, a 1 s
// timeout, one success and three failures in a row; an HTTP GET of "/";
// a gRPC check of service "".
func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if h := p.HTTPGet; h != nil {
		if h.Path == "" {
			h.Path = "/"
		}
		if h.Scheme == "" {
			h.Scheme = corev1.URISchemeHTTP
		}
	}
	if g := p.GRPC; g != nil && g.Service == nil {
		g.Service = ptr.To("") // GRPCAction's +default="": kubectl describe reads *service
	}
}

// validateProbes checks c's probes; init is whether c is an init
// container, where only a sidecar (restartPolicy Always) may have them.
func validateProbes(c corev1.Container, init bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
	for _, pr := range []struct {
		name  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		if pr.probe == nil {
			continue
		}
		p := path.Child(pr.name)
		if init && !sidecar {
			errs = append(errs, field.Forbidden(p, "may not be set for init containers without restartPolicy=Always"))
			continue
		}
		errs = append(errs, validateProbe(pr.probe, pr.name, p)...)
	}
	return errs
}

func validateProbe(probe *corev1.Probe, kind string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateProbeHandler(probe.ProbeHandler, path)...)
	for _, f := range []struct {
		name  string
		value int32
	}{{"initialDelaySeconds", probe.InitialDelaySeconds}, {"timeoutSeconds", probe.TimeoutSeconds},
		{"periodSeconds", probe.PeriodSeconds}, {"successThreshold", probe.SuccessThreshold}, {"failureThreshold", probe.FailureThreshold}} {
		if f.value < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, "must be greater than or equal to 0"))
		}
	}
	if kind != "readinessProbe" && probe.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(path.Child("successThreshold"), probe.SuccessThreshold, "must be 1"))
	}
	if g := probe.TerminationGracePeriodSeconds; g != nil {
		switch {
		case kind == "readinessProbe":
			errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must not be set for readinessProbes"))
		case *g <= 0:
			errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
		}
	}
	return errs
}

// validateProbeHandler: exactly one of exec, httpGet, tcpSocket, grpc.
func validateProbeHandler(h corev1.ProbeHandler, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	handlers := 0
	if h.Exec != nil {
		handlers++
		if len(h.Exec.Command) == 0 {
			errs = append(errs, field.Required(path.Child("exec", "command"), ""))
		}
	}
	if h.HTTPGet != nil {
		if handlers++; handlers > 1 {
			errs = append(errs, field.Forbidden(path.Child("httpGet"), "may not specify more than 1 handler type"))
		}
		p := path.Child("httpGet")
		if h.HTTPGet.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		errs = append(errs, validatePortNumOrName(h.HTTPGet.Port, p.Child("port"))...)
		if !probeSchemes.Has(h.HTTPGet.Scheme) {
			errs = append(errs, field.NotSupported(p.Child("scheme"), h.HTTPGet.Scheme, sets.List(probeSchemes)))
		}
		for i, hdr := range h.HTTPGet.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(hdr.Name) {
				errs = append(errs, field.Invalid(p.Child("httpHeaders").Index(i).Child("name"), hdr.Name, msg))
			}
		}
	}
	if h.TCPSocket != nil {
		if handlers++; handlers > 1 {
			errs = append(errs, field.Forbidden(path.Child("tcpSocket"), "may not specify more than 1 handler type"))
		}
		errs = append(errs, validatePortNumOrName(h.TCPSocket.Port, path.Child("tcpSocket", "port"))...)
	}
	if h.GRPC != nil {
		if handlers++; handlers > 1 {
			errs = append(errs, field.Forbidden(path.Child("grpc"), "may not specify more than 1 handler type"))
		}
		for _, msg := range validation.IsValidPortNum(int(h.GRPC.Port)) {
			errs = append(errs, field.Invalid(path.Child("grpc", "port"), h.GRPC.Port, msg))
		}
	}
	if handlers == 0 {
		errs = append(errs, field.Required(path, "must specify a handler type"))
	}
	return errs
}

// validatePortNumOrName: 1-65535, or a port name (IANA_SVC_NAME).
func validatePortNumOrName(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(path, port.IntValue(), msg))
		}
	case port.StrVal == "":
		errs = append(errs, field.Required(path, ""))
	default:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(path, port.StrVal, msg))
		}
	}
	return errs
}
