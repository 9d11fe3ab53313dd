package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// DeviceTaintRules taint devices without their driver: every device the
// selector picks (by driver, pool and device name; none picks all) gets
// the taint, which claims must tolerate. With NoExecute, Kubernetes'
// device taint eviction controller evicts the pods already using them
// and reports its progress in the rule's status conditions; mkube runs
// no such controller.
var DeviceTaintRules = &apiserver.Resource{
	GroupVersion: resourcev1.SchemeGroupVersion, Name: "devicetaintrules", Kind: "DeviceTaintRule",
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", updateTaintRuleStatus)},
	New:          func() runtime.Object { return &resourcev1.DeviceTaintRule{} },
	NewList:      func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*resourcev1.DeviceTaintRule).Status = resourcev1.DeviceTaintRuleStatus{}
	},
	Default: func(obj runtime.Object) { defaultTimeAdded(&obj.(*resourcev1.DeviceTaintRule).Spec.Taint) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		r := obj.(*resourcev1.DeviceTaintRule)
		var prev *resourcev1.DeviceTaint
		if old != nil {
			prev = &old.(*resourcev1.DeviceTaintRule).Spec.Taint
		}
		spec := field.NewPath("spec")
		errs := validateTaintSelector(r.Spec.DeviceSelector, spec.Child("deviceSelector"))
		return append(errs, validateDeviceTaint(r.Spec.Taint, prev, spec.Child("taint"))...)
	},
	// kube-apiserver's DeviceTaintRule printer.
	Columns: []apiserver.Column{{Name: "Key", Type: "string"}, {Name: "Value", Type: "string"},
		{Name: "Effect", Type: "string"}, {Name: "TimeAdded", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		r := obj.(*resourcev1.DeviceTaintRule)
		added := "<unset>"
		if t := r.Spec.Taint.TimeAdded; t != nil {
			added = apiserver.Age(*t, now)
		}
		return []any{r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, apiserver.Age(r.CreationTimestamp, now)}
	},
}

// defaultTimeAdded is Kubernetes' SetDefaults_DeviceTaint: a taint is
// stamped with when it was put on, to the second, so that tolerations'
// tolerationSeconds count from then.
func defaultTimeAdded(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		now := metav1.Now().Rfc3339Copy()
		t.TimeAdded = &now
	}
}

func validateTaintSelector(sel *resourcev1.DeviceTaintSelector, path *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	var errs field.ErrorList
	if sel.Driver != nil {
		errs = append(errs, validateDriverName(*sel.Driver, path.Child("driver"))...)
	}
	if sel.Pool != nil {
		errs = append(errs, validatePoolName(*sel.Pool, path.Child("pool"))...)
	}
	if sel.Device != nil {
		errs = append(errs, validateDNSLabel(*sel.Device, path.Child("device"))...)
	}
	return errs
}

// validateDeviceTaint is Kubernetes' validateDeviceTaint: a label-like
// key and value, and one of the effects (checked only when it changes,
// so a taint stored with an effect a later server drops stays valid).
func validateDeviceTaint(t resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelName(t.Key, path.Child("key"))
	if t.Value != "" {
		errs = append(errs, validateLabelValue(t.Value, path.Child("value"))...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(path.Child("effect"), ""))
		case !taintEffects.Has(t.Effect):
			errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)))
		}
	}
	return errs
}

// updateTaintRuleStatus is deviceTaintRuleStatusStrategy: only the
// conditions change, at most eight, valid as metav1 conditions are.
func updateTaintRuleStatus(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	out := cur.(*resourcev1.DeviceTaintRule).DeepCopy()
	out.Status = next.(*resourcev1.DeviceTaintRule).Status
	conditions := field.NewPath("status", "conditions")
	errs := metav1validation.ValidateConditions(out.Status.Conditions, conditions)
	if n := len(out.Status.Conditions); n > resourcev1.DeviceTaintRuleStatusMaxConditions {
		errs = append(errs, field.TooMany(conditions, n, resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return out, errs
}
