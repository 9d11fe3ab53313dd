package apps

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// DaemonSets run one pod of their template on every node that fits it
// (its nodeSelector, node affinity and tolerations): a log collector or a
// network agent per node. The daemonset controller creates the pod of
// each fitting node, deletes those of nodes that stop fitting, and rolls a
// new template out node by node, keeping each template it ran as a
// ControllerRevision (`kubectl rollout history daemonset/x`).
var DaemonSets = &apiserver.Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "daemonsets", Kind: "DaemonSet", Namespaced: true,
	ShortNames: []string{"ds"}, Categories: []string{"all"}, Columns: daemonSetColumns, Row: daemonSetRow,
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", updateDaemonSetStatus)},
	New:          func() runtime.Object { return &appsv1.DaemonSet{} },
	NewList:      func() runtime.Object { return &appsv1.DaemonSetList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*appsv1.DaemonSet).Status = appsv1.DaemonSetStatus{}
	},
	Default: func(obj runtime.Object) { defaultDaemonSet(obj.(*appsv1.DaemonSet)) },
	Admit: func(_ context.Context, _ admission.Objects, obj, old runtime.Object) error {
		var prev *appsv1.DaemonSet
		if old != nil {
			prev = old.(*appsv1.DaemonSet)
		}
		return setTemplateGeneration(obj.(*appsv1.DaemonSet), prev)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		ds := obj.(*appsv1.DaemonSet)
		errs := validateDaemonSetSpec(&ds.Spec, field.NewPath("spec"))
		if old != nil {
			// ValidateDaemonSetSpecUpdate: the selector names the pods
			// the set owns, so it never changes.
			errs = append(errs, apivalidation.ValidateImmutableField(ds.Spec.Selector, old.(*appsv1.DaemonSet).Spec.Selector, field.NewPath("spec", "selector"))...)
		}
		return errs
	},
	WriteStep: core.WorkloadWriteStep,
}

// kube-apiserver's DaemonSet printer (printDaemonSet): the status counts,
// then the template's nodeSelector; -o wide adds containers, images and
// the selector.
var daemonSetColumns = append([]apiserver.Column{
	{Name: "Desired", Type: "integer"}, {Name: "Current", Type: "integer"}, {Name: "Ready", Type: "integer"},
	{Name: "Up-to-date", Type: "integer"}, {Name: "Available", Type: "integer"},
	{Name: "Node Selector", Type: "string"}, {Name: "Age", Type: "string"},
}, core.WorkloadWideColumns...)

func daemonSetRow(obj runtime.Object, now time.Time) []any {
	ds := obj.(*appsv1.DaemonSet)
	st := ds.Status
	names, images := core.ContainersAndImages(&ds.Spec.Template.Spec)
	return []any{int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		apiserver.Age(ds.CreationTimestamp, now), names, images, core.SelectorString(ds.Spec.Selector)}
}

// defaultDaemonSet is Kubernetes' SetDefaults_DaemonSet and the defaulting
// of its pod template: RollingUpdate, one node at a time (maxUnavailable 1,
// maxSurge 0), and ten old templates kept.
func defaultDaemonSet(ds *appsv1.DaemonSet) {
	s := &ds.Spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	core.DefaultPodSpec(&ds.Spec.Template.Spec)
}

// setTemplateGeneration keeps the annotation
// deprecated.daemonset.template.generation, which is how apps/v1 shows the
// internal spec.templateGeneration of Kubernetes' DaemonSet strategy: 1 on
// create (or the client's, if higher), then one more each time the
// template changes, whatever the client sends. The controller copies it
// into each pod's pod-template-generation label, the pre-1.6 way of
// telling new pods from old (the controller-revision-hash label is the
// current one).
func setTemplateGeneration(ds, old *appsv1.DaemonSet) error {
	var gen int64
	if old == nil {
		if v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return apierrors.NewBadRequest(fmt.Sprintf("annotation %s: %v", appsv1.DeprecatedTemplateGeneration, err))
			}
			gen = n
		}
		gen = max(gen, 1)
	} else {
		gen, _ = strconv.ParseInt(old.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
		if !equality.Semantic.DeepEqual(ds.Spec.Template, old.Spec.Template) {
			gen++
		}
	}
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(gen, 10)
	return nil
}

// validateDaemonSetSpec is Kubernetes' ValidateDaemonSetSpec, in its words.
// A missing selector selects nothing, so it is reported as not matching
// the template's labels, as Kubernetes does.
func validateDaemonSetSpec(spec *appsv1.DaemonSetSpec, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabelSelector(spec.Selector, metavalidation.LabelSelectorValidationOptions{}, path.Child("selector"))
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(path.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(path.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}
	tmpl := path.Child("template")
	errs = append(errs, core.ValidatePodTemplateSpec(&spec.Template, tmpl)...)
	// A daemon runs for as long as its node does.
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tmpl.Child("spec", "restartPolicy"), spec.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if spec.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tmpl.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in DaemonSet is not Supported"))
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), path.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, path.Child("updateStrategy"))...)
	if spec.RevisionHistoryLimit != nil { // zero is valid: keep no old template
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), path.Child("revisionHistoryLimit"))...)
	}
	return errs
}

// validateDaemonSetUpdateStrategy is ValidateDaemonSetUpdateStrategy and
// ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable (delete
// an old pod, then create its replacement) and maxSurge (create the
// replacement first) is non-zero, each an integer or a percentage of at
// most 100%.
func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
	default:
		return field.ErrorList{field.NotSupported(path, *s, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
	}
	if s.RollingUpdate == nil {
		return field.ErrorList{field.Required(path.Child("rollingUpdate"), "")}
	}
	ru := path.Child("rollingUpdate")
	unavailable, errs := intOrPercent(s.RollingUpdate.MaxUnavailable, ru.Child("maxUnavailable"), true)
	surge, errS := intOrPercent(s.RollingUpdate.MaxSurge, ru.Child("maxSurge"), true)
	errs = append(errs, errS...)
	switch {
	case unavailable != 0 && surge != 0:
		errs = append(errs, field.Invalid(ru.Child("maxSurge"), s.RollingUpdate.MaxSurge, "may not be set when maxUnavailable is non-zero"))
	case unavailable == 0 && surge == 0:
		errs = append(errs, field.Required(ru.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
	}
	return errs
}

// updateDaemonSetStatus is Kubernetes' DaemonSet status strategy: the
// status (and, as that older strategy allows, labels and annotations)
// come from the client, the spec stays; the counts are never negative and
// collisionCount, which salts the revision names, never goes down.
func updateDaemonSetStatus(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	old, in := cur.(*appsv1.DaemonSet), next.(*appsv1.DaemonSet)
	out := old.DeepCopy()
	out.Status = *in.Status.DeepCopy()
	out.Labels, out.Annotations = in.Labels, in.Annotations
	path := field.NewPath("status")
	st := &out.Status
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value int32
	}{{"currentNumberScheduled", st.CurrentNumberScheduled}, {"numberMisscheduled", st.NumberMisscheduled},
		{"desiredNumberScheduled", st.DesiredNumberScheduled}, {"numberReady", st.NumberReady}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.value), path.Child(f.name))...)
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(st.ObservedGeneration, path.Child("observedGeneration"))...)
	for _, f := range []struct {
		name  string
		value int32
	}{{"updatedNumberScheduled", st.UpdatedNumberScheduled}, {"numberAvailable", st.NumberAvailable}, {"numberUnavailable", st.NumberUnavailable}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.value), path.Child(f.name))...)
	}
	if st.CollisionCount != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*st.CollisionCount), path.Child("collisionCount"))...)
	}
	if oc, nc := old.Status.CollisionCount, st.CollisionCount; oc != nil && (nc == nil || *nc < *oc) {
		errs = append(errs, field.Invalid(path.Child("collisionCount"), ptr.Deref(nc, 0), "cannot be decremented"))
	}
	return out, errs
}
