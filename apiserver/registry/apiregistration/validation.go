package apiregistration

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// The bounds of the two priorities (kube-aggregator's ValidateAPIService):
// discovery sorts groups by groupPriorityMinimum, highest first, and a
// group's versions by versionPriority.
const (
	maxGroupPriorityMinimum = 20000
	maxVersionPriority      = 1000
)

// ValidateAPIService is kube-aggregator's ValidateAPIService, in its words:
// the name is <version>.<group>, the legacy core group is "v1." alone,
// and a Local APIService (no spec.service) has nothing to say about TLS.
func ValidateAPIService(svc *apiregistrationv1.APIService) field.ErrorList {
	var errs field.ErrorList
	spec := svc.Spec
	specPath := field.NewPath("spec")

	// An invalid path segment is reported by the name rule (the
	// Resource's NameRule); only a well-formed name is compared.
	required := spec.Version + "." + spec.Group
	if len(path.IsValidPathSegmentName(svc.Name)) == 0 && svc.Name != required {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), svc.Name,
			fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)))
	}

	if spec.Group == "" && spec.Version != "v1" {
		errs = append(errs, field.Required(specPath.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if spec.Group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.Group) {
			errs = append(errs, field.Invalid(specPath.Child("group"), spec.Group, msg))
		}
	}
	for _, msg := range utilvalidation.IsDNS1035Label(spec.Version) {
		errs = append(errs, field.Invalid(specPath.Child("version"), spec.Version, msg))
	}

	if spec.GroupPriorityMinimum <= 0 || spec.GroupPriorityMinimum > maxGroupPriorityMinimum {
		errs = append(errs, field.Invalid(specPath.Child("groupPriorityMinimum"), spec.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if spec.VersionPriority <= 0 || spec.VersionPriority > maxVersionPriority {
		errs = append(errs, field.Invalid(specPath.Child("versionPriority"), spec.VersionPriority, "must be positive and less than 1000"))
	}

	if spec.Service == nil {
		if len(spec.CABundle) != 0 {
			errs = append(errs, field.Invalid(specPath.Child("caBundle"), fmt.Sprintf("%d bytes", len(spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(specPath.Child("insecureSkipTLSVerify"), spec.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}

	svcPath := specPath.Child("service")
	if spec.Service.Namespace == "" {
		errs = append(errs, field.Required(svcPath.Child("namespace"), ""))
	}
	if spec.Service.Name == "" {
		errs = append(errs, field.Required(svcPath.Child("name"), ""))
	}
	if spec.Service.Port != nil {
		if msgs := utilvalidation.IsValidPortNum(int(*spec.Service.Port)); msgs != nil {
			errs = append(errs, field.Invalid(svcPath.Child("port"), *spec.Service.Port, "port is not valid: "+strings.Join(msgs, ", ")))
		}
	}
	if spec.InsecureSkipTLSVerify && len(spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(specPath.Child("insecureSkipTLSVerify"), spec.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return errs
}

// validateStatus is ValidateAPIServiceStatus: a condition is True, False
// or Unknown.
func validateStatus(svc *apiregistrationv1.APIService) field.ErrorList {
	var errs field.ErrorList
	valid := []string{string(apiregistrationv1.ConditionTrue), string(apiregistrationv1.ConditionFalse), string(apiregistrationv1.ConditionUnknown)}
	for i, c := range svc.Status.Conditions {
		switch c.Status {
		case apiregistrationv1.ConditionTrue, apiregistrationv1.ConditionFalse, apiregistrationv1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("status", "conditions").Index(i).Child("status"), c.Status, valid))
		}
	}
	return errs
}
