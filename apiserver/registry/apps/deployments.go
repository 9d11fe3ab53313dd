package apps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// Deployments keep one ReplicaSet per pod template and roll from the old
// to the new one (seed 003, rolling updates); the deployment controller
// does the work.
var Deployments = &apiserver.Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "deployments", Kind: "Deployment", Namespaced: true,
	ShortNames: []string{"deploy"}, Categories: []string{"all"}, Columns: deploymentColumns, Row: deploymentRow,
	Subresources:     []apiserver.Subresource{apiserver.StatusSubresource, apiserver.ScaleSubresource},
	New:              func() runtime.Object { return &appsv1.Deployment{} },
	NewList:          func() runtime.Object { return &appsv1.DeploymentList{} },
	PrepareForCreate: func(obj runtime.Object) { obj.(*appsv1.Deployment).Status = appsv1.DeploymentStatus{} },
	Default:          func(obj runtime.Object) { defaultDeployment(obj.(*appsv1.Deployment)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		d := obj.(*appsv1.Deployment)
		var oldSel *metav1.LabelSelector
		if old != nil {
			oldSel = old.(*appsv1.Deployment).Spec.Selector
		}
		return append(core.ValidateWorkload(d.Spec.Replicas, d.Spec.Selector, oldSel, &d.Spec.Template), validateDeploymentStrategy(&d.Spec)...)
	},
	WriteStep: core.WorkloadWriteStep,
}

var deploymentColumns = append([]apiserver.Column{
	{Name: "Ready", Type: "string"}, {Name: "Up-to-date", Type: "integer"}, {Name: "Available", Type: "integer"},
	{Name: "Age", Type: "string"},
}, core.WorkloadWideColumns...)

func deploymentRow(obj runtime.Object, now time.Time) []any {
	d := obj.(*appsv1.Deployment)
	names, images := core.ContainersAndImages(&d.Spec.Template.Spec)
	return []any{fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, *d.Spec.Replicas), int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas), apiserver.Age(d.CreationTimestamp, now), names, images, core.SelectorString(d.Spec.Selector)}
}

// defaultDeployment is Kubernetes' apps/v1 defaulting.
func defaultDeployment(d *appsv1.Deployment) {
	core.DefaultReplicas(&d.Spec.Replicas)
	core.DefaultPodSpec(&d.Spec.Template.Spec)
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		quarter := intstr.FromString("25%")
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = &quarter
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = &quarter
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
}

// validateDeploymentStrategy checks a Deployment's strategy and deadline
// as Kubernetes does (ValidateDeploymentSpec), in its words.
func validateDeploymentStrategy(spec *appsv1.DeploymentSpec) field.ErrorList {
	path := field.NewPath("spec", "strategy")
	var errs field.ErrorList
	switch s := spec.Strategy; s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(path.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			errs = append(errs, field.Required(path.Child("rollingUpdate"), "this should be defaulted and never be nil"))
			break
		}
		ru := path.Child("rollingUpdate")
		unavailable, errU := intOrPercent(s.RollingUpdate.MaxUnavailable, ru.Child("maxUnavailable"), true)
		surge, errS := intOrPercent(s.RollingUpdate.MaxSurge, ru.Child("maxSurge"), false) // a surge may exceed 100%
		errs = append(append(errs, errU...), errS...)
		if len(errU)+len(errS) == 0 && unavailable == 0 && surge == 0 {
			errs = append(errs, field.Invalid(ru.Child("maxUnavailable"), s.RollingUpdate.MaxUnavailable.String(), "may not be 0 when `maxSurge` is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), s.Type,
			[]string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), field.NewPath("spec", "minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*spec.RevisionHistoryLimit), field.NewPath("spec", "revisionHistoryLimit"))...)
	}
	if spec.ProgressDeadlineSeconds != nil {
		errs = append(errs, nonNegative(int64(*spec.ProgressDeadlineSeconds), field.NewPath("spec", "progressDeadlineSeconds"))...)
	}
	if spec.ProgressDeadlineSeconds != nil && *spec.ProgressDeadlineSeconds <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(field.NewPath("spec", "progressDeadlineSeconds"), *spec.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
	}
	return errs
}

var percentPattern = regexp.MustCompile(`^[0-9]+%$`)

func nonNegative(v int64, path *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, "must be greater than or equal to 0")}
	}
	return nil
}

// intOrPercent checks a maxSurge or maxUnavailable: a non-negative integer
// or a percentage (at most 100% if capped). It returns the number, or the
// percentage.
func intOrPercent(v *intstr.IntOrString, path *field.Path, capped bool) (int, field.ErrorList) {
	if v == nil {
		return 0, nil
	}
	if v.Type == intstr.String {
		if !percentPattern.MatchString(v.StrVal) {
			return 0, field.ErrorList{field.Invalid(path, v.StrVal, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
		}
		pct, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		if capped && pct > 100 {
			return 0, field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
		}
		return pct, nil
	}
	return int(v.IntVal), nonNegative(int64(v.IntVal), path)
}
