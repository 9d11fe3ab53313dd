package networking

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ingressClassAnnotation is how Ingresses named their class before
// spec.ingressClassName existed; controllers still read it.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

var (
	pathTypes = sets.New(networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific)
	// A path an Exact or Prefix rule matches is compared as it is, so
	// Kubernetes refuses those that a proxy would normalise first.
	badPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	badPathSuffixes  = []string{"/..", "/."}
)

// validateIngress is Kubernetes' ValidateIngressCreate and
// ValidateIngressUpdate (metadata is checked for every kind by the
// server). On an update, a rule of the stored object that an older, looser
// Kubernetes let in (a TLS secret name that is not a valid name, a
// wildcard host with invalid paths) does not block the write, as there.
func validateIngress(obj, old runtime.Object) field.ErrorList {
	ing := obj.(*networkingv1.Ingress)
	var prev *networkingv1.Ingress
	if old != nil {
		prev = old.(*networkingv1.Ingress)
	}
	opts := ingressOptions{allowInvalidSecretName: hasInvalidSecretName(prev), allowInvalidWildcardRule: hasInvalidWildcardRule(prev)}
	errs := validateIngressSpec(&ing.Spec, field.NewPath("spec"), opts)
	if prev == nil {
		if class, set := ing.Annotations[ingressClassAnnotation]; set && ing.Spec.IngressClassName != nil && class != *ing.Spec.IngressClassName {
			errs = append(errs, field.Invalid(field.NewPath("annotations").Child(ingressClassAnnotation), class,
				"must match `ingressClassName` when both are specified"))
		}
	}
	return errs
}

// ingressOptions are Kubernetes' IngressValidationOptions that still
// matter (service names are DNS labels since RelaxedServiceNameValidation
// went GA in 1.37).
type ingressOptions struct {
	allowInvalidSecretName   bool
	allowInvalidWildcardRule bool
}

func validateIngressSpec(spec *networkingv1.IngressSpec, path *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(path, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, path.Child("defaultBackend"))...)
	}
	errs = append(errs, validateIngressRules(spec.Rules, path.Child("rules"), opts)...)
	errs = append(errs, validateIngressTLS(spec.TLS, path.Child("tls"), opts)...)
	if spec.IngressClassName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.IngressClassName, false) {
			errs = append(errs, field.Invalid(path.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return errs
}

// validateHost: a host is a DNS name, perhaps with a leading "*." wildcard,
// and never an IP address. It reports whether the host is a wildcard.
func validateHost(host string, path *field.Path, mayBeIP bool) (field.ErrorList, bool) {
	var errs field.ErrorList
	if !mayBeIP && netutils.ParseIPSloppy(host) != nil {
		errs = append(errs, field.Invalid(path, host, "must be a DNS name, not an IP address"))
	}
	check, wildcard := validation.IsDNS1123Subdomain, strings.Contains(host, "*")
	if wildcard {
		check = validation.IsWildcardDNS1123Subdomain
	}
	for _, msg := range check(host) {
		errs = append(errs, field.Invalid(path, host, msg))
	}
	return errs, wildcard
}

func validateIngressRules(rules []networkingv1.IngressRule, path *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		wildcard := false
		if r.Host != "" {
			var hostErrs field.ErrorList
			hostErrs, wildcard = validateHost(r.Host, path.Index(i).Child("host"), false)
			errs = append(errs, hostErrs...)
		}
		if wildcard && opts.allowInvalidWildcardRule {
			continue
		}
		if r.HTTP != nil {
			errs = append(errs, validateHTTPRule(r.HTTP, path.Index(i).Child("http"))...)
		}
	}
	return errs
}

func validateHTTPRule(http *networkingv1.HTTPIngressRuleValue, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(http.Paths) == 0 {
		errs = append(errs, field.Required(path.Child("paths"), ""))
	}
	for i := range http.Paths {
		errs = append(errs, validateHTTPPath(&http.Paths[i], path.Child("paths").Index(i))...)
	}
	return errs
}

// validateHTTPPath: every path says how it matches (pathType, no default
// in v1); Exact and Prefix paths are absolute and already normalised;
// an ImplementationSpecific one leaves matching to the controller and
// needs only to be absolute if set.
func validateHTTPPath(p *networkingv1.HTTPIngressPath, path *field.Path) field.ErrorList {
	if p.PathType == nil {
		return field.ErrorList{field.Required(path.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *p.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
		for _, seq := range badPathSequences {
			if strings.Contains(p.Path, seq) {
				errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must not contain '"+seq+"'"))
			}
		}
		for _, suffix := range badPathSuffixes {
			if strings.HasSuffix(p.Path, suffix) {
				errs = append(errs, field.Invalid(path.Child("path"), p.Path, "cannot end with '"+suffix+"'"))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("pathType"), *p.PathType, sets.List(pathTypes)))
	}
	return append(errs, validateIngressBackend(&p.Backend, path.Child("backend"))...)
}

// validateIngressBackend: a backend is either a Service's port (by name or
// by number, not both) or a resource of some other kind (a storage
// bucket, say), never both.
func validateIngressBackend(b *networkingv1.IngressBackend, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(path, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		r, rp := b.Resource, path.Child("resource")
		if r.APIGroup != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*r.APIGroup) {
				errs = append(errs, field.Invalid(rp.Child("apiGroup"), *r.APIGroup, msg))
			}
		}
		errs = append(errs, requiredPathSegment(r.Kind, rp.Child("kind"))...)
		errs = append(errs, requiredPathSegment(r.Name, rp.Child("name"))...)
	case b.Service != nil:
		svc := b.Service
		if svc.Name == "" {
			errs = append(errs, field.Required(path.Child("service", "name"), ""))
		} else {
			for _, msg := range apivalidation.NameIsDNSLabel(svc.Name, false) {
				errs = append(errs, field.Invalid(path.Child("service", "name"), svc.Name, msg))
			}
		}
		byName, byNumber := svc.Port.Name != "", svc.Port.Number != 0
		switch {
		case byName && byNumber:
			errs = append(errs, field.Invalid(path, "", "cannot set both port name & port number"))
		case byName:
			for _, msg := range validation.IsValidPortName(svc.Port.Name) {
				errs = append(errs, field.Invalid(path.Child("service", "port", "name"), svc.Port.Name, msg))
			}
		case byNumber:
			for _, msg := range validation.IsValidPortNum(int(svc.Port.Number)) {
				errs = append(errs, field.Invalid(path.Child("service", "port", "number"), svc.Port.Number, msg))
			}
		default:
			errs = append(errs, field.Required(path, "port name or number is required"))
		}
	default:
		errs = append(errs, field.Invalid(path, "", "resource or service backend is required"))
	}
	return errs
}

// requiredPathSegment: a name that goes into a URL path, required.
func requiredPathSegment(value string, path *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// validateIngressTLS: TLS hosts are DNS names (wildcards allowed) and the
// certificate's Secret, if named, has a valid name.
func validateIngressTLS(tls []networkingv1.IngressTLS, path *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tls {
		for j, host := range t.Hosts {
			hostErrs, _ := validateHost(host, path.Index(i).Child("hosts").Index(j), true)
			errs = append(errs, hostErrs...)
		}
		if opts.allowInvalidSecretName {
			continue
		}
		for _, msg := range secretNameErrors(t.SecretName) {
			errs = append(errs, field.Invalid(path.Index(i).Child("secretName"), t.SecretName, msg))
		}
	}
	return errs
}

func secretNameErrors(name string) []string {
	if name == "" {
		return nil // the controller's default certificate
	}
	return apivalidation.NameIsDNSSubdomain(name, false)
}

// hasInvalidSecretName: the stored Ingress names a Secret by a name that
// is not valid, as older Kubernetes versions let in.
func hasInvalidSecretName(prev *networkingv1.Ingress) bool {
	if prev == nil {
		return false
	}
	for _, t := range prev.Spec.TLS {
		if len(secretNameErrors(t.SecretName)) > 0 {
			return true
		}
	}
	return false
}

// hasInvalidWildcardRule: the stored Ingress has a wildcard host whose
// paths are not valid, as older Kubernetes versions let in.
func hasInvalidWildcardRule(prev *networkingv1.Ingress) bool {
	if prev == nil {
		return false
	}
	for _, r := range prev.Spec.Rules {
		if strings.Contains(r.Host, "*") && r.HTTP != nil && len(validateHTTPRule(r.HTTP, nil)) > 0 {
			return true
		}
	}
	return false
}
