package resource

import (
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver/registry/storage"
)

// The names DRA objects refer to each other by, with Kubernetes' rules
// (pkg/apis/resource/validation): a driver is named as a CSI driver is,
// devices and requests are DNS labels, device classes DNS subdomains,
// and a pool is one or more DNS subdomains joined by "/".

var validateDriverName = storage.ValidateCSIDriverName

func validateDNSLabel(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validateDNSSubdomain(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateDeviceClassName: a request names the class it wants.
func validateDeviceClassName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return validateDNSSubdomain(name, path)
}

func validatePoolName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, validateDNSSubdomain(part, path)...)
	}
	return errs
}

func validateNodeName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateQualifiedName is an attribute's or a capacity's name: a C
// identifier, optionally after a driver-like domain ("gpu.example.com/model").
func validateQualifiedName(name string, path *field.Path) field.ErrorList {
	domain, id, qualified := strings.Cut(name, "/")
	if !qualified {
		return validateCIdentifier(domain, path)
	}
	var errs field.ErrorList
	if domain == "" {
		errs = append(errs, field.Invalid(path, "", "the domain must not be empty"))
	} else {
		errs = append(errs, validateDriverName(domain, path)...)
	}
	if id == "" {
		return append(errs, field.Invalid(path, "", "the name must not be empty"))
	}
	return append(errs, validateCIdentifier(id, path)...)
}

// validateFullyQualifiedName is a qualified name that has its domain: what
// a constraint's matchAttribute names.
func validateFullyQualifiedName(name string, path *field.Path) field.ErrorList {
	errs := validateQualifiedName(name, path)
	if !strings.Contains(name, "/") {
		errs = append(errs, field.Invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return errs
}

func validateCIdentifier(id string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(path, id, msg))
	}
	return errs
}

func validateLabelValue(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}
