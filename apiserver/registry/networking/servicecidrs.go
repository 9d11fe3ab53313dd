package networking

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/mkube/mkube/apiserver"
)

// ServiceCIDRs are the ranges Services' ClusterIPs come from: one CIDR,
// or two for a dual-stack cluster (one per IP family).
var ServiceCIDRs = &apiserver.Resource{
	GroupVersion: networkingv1.SchemeGroupVersion, Name: "servicecidrs", Kind: "ServiceCIDR",
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &networkingv1.ServiceCIDR{} },
	NewList:      func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*networkingv1.ServiceCIDR).Status = networkingv1.ServiceCIDRStatus{} // ServiceCIDRStatusFieldWiping
	},
	Validate: validateServiceCIDR,
	Columns:  []apiserver.Column{{Name: "CIDRs", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		sc := obj.(*networkingv1.ServiceCIDR)
		return []any{strings.Join(sc.Spec.CIDRs, ","), apiserver.Age(sc.CreationTimestamp, now)}
	},
	Bootstrap: []runtime.Object{defaultServiceCIDR},
}

// DefaultServiceCIDRName is the ServiceCIDR kube-apiserver (1.33 and
// later) creates for its --service-cluster-ip-range.
const DefaultServiceCIDRName = "kubernetes"

// ServiceClusterIPRange is the range mkube's Services take their
// ClusterIPs from; registry/core/services.go allocates from the same
// range (a test checks they agree).
const ServiceClusterIPRange = "10.96.0.0/12"

// defaultServiceCIDR says, as a real cluster does, which range the
// ClusterIPs come from: `kubectl get servicecidr` shows it. Kubernetes'
// default ServiceCIDR controller also sets its Ready condition; mkube
// leaves the status empty.
var defaultServiceCIDR = &networkingv1.ServiceCIDR{
	ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceCIDRName},
	Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{ServiceClusterIPRange}},
}

// validateServiceCIDR is Kubernetes' ValidateServiceCIDR and
// ValidateServiceCIDRUpdate: one or two canonical CIDRs, one of each
// family; once created they are fixed, except that a single-stack range
// may gain a second family (the upgrade to dual stack).
func validateServiceCIDR(obj, old runtime.Object) field.ErrorList {
	sc := obj.(*networkingv1.ServiceCIDR)
	cidrs := field.NewPath("spec", "cidrs")
	if old == nil {
		return validateCIDRs(sc.Spec.CIDRs, cidrs)
	}
	prev := old.(*networkingv1.ServiceCIDR).Spec.CIDRs
	var errs field.ErrorList
	switch {
	case len(prev) == len(sc.Spec.CIDRs):
		for i := range prev {
			if prev[i] != sc.Spec.CIDRs[i] {
				errs = append(errs, field.Invalid(cidrs.Index(i), sc.Spec.CIDRs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
	case len(prev) == 1 && len(sc.Spec.CIDRs) == 2:
		if sc.Spec.CIDRs[0] != prev[0] {
			errs = append(errs, field.Invalid(cidrs.Index(0), sc.Spec.CIDRs[0], apivalidation.FieldImmutableErrorMsg))
		}
		errs = append(errs, validateCIDRs(sc.Spec.CIDRs, cidrs)...)
	default:
		errs = append(errs, field.Invalid(cidrs, sc.Spec.CIDRs, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

func validateCIDRs(cidrs []string, path *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(path, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(path, cidrs, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, validation.IsValidCIDR(path.Index(i), c)...)
	}
	if len(cidrs) == 2 {
		first, second := netutils.IPFamilyOfCIDRString(cidrs[0]), netutils.IPFamilyOfCIDRString(cidrs[1])
		if first == second && first != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(path, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}
