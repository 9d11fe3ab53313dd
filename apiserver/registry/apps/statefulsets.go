package apps

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// StatefulSets run pods that keep who they are: pod web-0 is always web-0,
// with hostname web-0, in the DNS subdomain of the set's headless Service
// (spec.serviceName), and with its own PersistentVolumeClaims made from
// spec.volumeClaimTemplates (data-web-0), which outlive the pod. The
// statefulset controller creates the pods one ordinal after the other
// (OrderedReady) or all at once (Parallel), and rolls a new template out
// from the highest ordinal down, keeping each template it ran as a
// ControllerRevision.
var StatefulSets = &apiserver.Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "statefulsets", Kind: "StatefulSet", Namespaced: true,
	ShortNames: []string{"sts"}, Categories: []string{"all"},
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", updateStatefulSetStatus),
		apiserver.ScaleSubresource},
	New:     func() runtime.Object { return &appsv1.StatefulSet{} },
	NewList: func() runtime.Object { return &appsv1.StatefulSetList{} },
	// The pods are named <set>-<ordinal> and carry the name as a label
	// value and a hostname: the set's name is a DNS label, as Kubernetes'
	// ValidateStatefulSetName.
	NameRule:         apivalidation.NameIsDNSLabel,
	PrepareForCreate: func(obj runtime.Object) { obj.(*appsv1.StatefulSet).Status = appsv1.StatefulSetStatus{} },
	Default:          func(obj runtime.Object) { defaultStatefulSet(obj.(*appsv1.StatefulSet)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		sts := obj.(*appsv1.StatefulSet)
		if old == nil {
			return validateStatefulSetSpec(&sts.Spec, statefulSetOptions{})
		}
		return validateStatefulSetUpdate(sts, old.(*appsv1.StatefulSet))
	},
	Columns:   statefulSetColumns,
	Row:       statefulSetRow,
	WriteStep: core.WorkloadWriteStep,
}

// kube-apiserver's StatefulSet printer: READY is ready pods over
// spec.replicas; -o wide adds the template's containers and images.
var statefulSetColumns = []apiserver.Column{
	{Name: "Ready", Type: "string"}, {Name: "Age", Type: "string"},
	{Name: "Containers", Type: "string", Priority: 1}, {Name: "Images", Type: "string", Priority: 1},
}

func statefulSetRow(obj runtime.Object, now time.Time) []any {
	sts := obj.(*appsv1.StatefulSet)
	names, images := core.ContainersAndImages(&sts.Spec.Template.Spec)
	return []any{fmt.Sprintf("%d/%d", sts.Status.ReadyReplicas, ptr.Deref(sts.Spec.Replicas, 0)),
		apiserver.Age(sts.CreationTimestamp, now), names, images}
}

// defaultStatefulSet is Kubernetes' SetDefaults_StatefulSet and the
// generated defaulting of its pod template and claim templates. The
// MaxUnavailableStatefulSet gate is on in 1.37, so a rollingUpdate block
// gets maxUnavailable 1; a bare type RollingUpdate keeps no block at all.
func defaultStatefulSet(sts *appsv1.StatefulSet) {
	spec := &sts.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = ptr.To[int32](0)
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	core.DefaultReplicas(&spec.Replicas)
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	core.DefaultPodSpec(&spec.Template.Spec)
	for i := range spec.VolumeClaimTemplates {
		// SetDefaults_PersistentVolumeClaim(Spec), as for a claim of its
		// own: `kubectl get sts -o yaml` shows each template Pending.
		t := &spec.VolumeClaimTemplates[i]
		if t.Status.Phase == "" {
			t.Status.Phase = corev1.ClaimPending
		}
		if t.Spec.VolumeMode == nil {
			t.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
	}
}

// statefulSetOptions are Kubernetes' StatefulSetValidationOptions: what an
// update tolerates in an object stored under older rules.
type statefulSetOptions struct {
	allowInvalidServiceName bool // serviceName is immutable: keep what was accepted
	skipPodTemplate         bool // the stored template fails today's rules
	skipClaimTemplates      bool // immutable too
}

// validateStatefulSetUpdate is ValidateStatefulSetUpdate: the new spec is
// valid, and the fields that name what the pods are (selector, claim
// templates, governing Service, management policy) never change. Replicas,
// ordinals, template, updateStrategy, minReadySeconds, the retention
// policy and the history limit may.
func validateStatefulSetUpdate(sts, old *appsv1.StatefulSet) field.ErrorList {
	opts := statefulSetOptions{allowInvalidServiceName: true, skipClaimTemplates: true}
	if len(validateStatefulSetSpec(&old.Spec, opts)) > 0 {
		opts.skipPodTemplate = true // tolerate a set stored before a template rule existed
	}
	errs := validateStatefulSetSpec(&sts.Spec, opts)
	spec := field.NewPath("spec")
	errs = append(errs, apivalidation.ValidateImmutableField(sts.Spec.Selector, old.Spec.Selector, spec.Child("selector"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(sts.Spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates, spec.Child("volumeClaimTemplates"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(sts.Spec.ServiceName, old.Spec.ServiceName, spec.Child("serviceName"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(sts.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy, spec.Child("podManagementPolicy"))...)
	return errs
}

// validateStatefulSetSpec is Kubernetes' ValidateStatefulSetSpec, in its
// words. Recreate is not an update strategy here: it is behind the alpha
// StatefulSetRecreateStrategy gate, off in 1.37.
func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, opts statefulSetOptions) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(path.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(path.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	errs = append(errs, validateUpdateStrategy(&spec.UpdateStrategy, path.Child("updateStrategy"))...)
	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		rp := path.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, validateRetentionPolicyType(p.WhenDeleted, rp.Child("whenDeleted"))...)
		errs = append(errs, validateRetentionPolicyType(p.WhenScaled, rp.Child("whenScaled"))...)
	}
	if !opts.skipClaimTemplates {
		for i := range spec.VolumeClaimTemplates {
			errs = append(errs, validateClaimTemplate(&spec.VolumeClaimTemplates[i], path.Child("volumeClaimTemplates").Index(i))...)
		}
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(ptr.Deref(spec.Replicas, 0)), path.Child("replicas"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), path.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.Ordinals.Start), path.Child("ordinals.start"))...)
	}
	// serviceName is optional (a set need not be in DNS); when set it
	// names a Service, so it is a DNS label.
	if !opts.allowInvalidServiceName && spec.ServiceName != "" {
		for _, msg := range validation.IsDNS1123Label(spec.ServiceName) {
			errs = append(errs, field.Invalid(path.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	errs = append(errs, validateStatefulSetSelector(spec, path)...)
	if !opts.skipPodTemplate {
		errs = append(errs, core.ValidatePodTemplateSpec(templateToValidate(spec), path.Child("template"))...)
	}
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(path.Child("template", "spec", "restartPolicy"), spec.Template.Spec.RestartPolicy,
			[]string{string(corev1.RestartPolicyAlways)}))
	}
	if spec.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(path.Child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in StatefulSet is not Supported"))
	}
	return errs
}

// validateUpdateStrategy: RollingUpdate (with an optional rollingUpdate
// block) or OnDelete (without one).
func validateUpdateStrategy(s *appsv1.StatefulSetUpdateStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case "":
		return field.ErrorList{field.Required(path, "")}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Invalid(path.Child("rollingUpdate"), s.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType))}
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return validateRollingUpdate(s.RollingUpdate, path.Child("rollingUpdate"))
		}
	default:
		return field.ErrorList{field.Invalid(path, s,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType))}
	}
	return nil
}

// validateRollingUpdate: a non-negative partition, and a maxUnavailable
// that lets at least one pod go and at most all of them.
func validateRollingUpdate(ru *appsv1.RollingUpdateStatefulSetStrategy, path *field.Path) field.ErrorList {
	errs := apivalidation.ValidateNonnegativeField(int64(ptr.Deref(ru.Partition, 0)), path.Child("partition"))
	mu := ru.MaxUnavailable
	if mu == nil {
		return errs
	}
	p := path.Child("maxUnavailable")
	value, isPercent := 0, false
	switch mu.Type {
	case intstr.String:
		msgs := validation.IsValidPercent(mu.StrVal)
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(p, *mu, msg))
		}
		if len(msgs) == 0 {
			value, _ = strconv.Atoi(strings.TrimSuffix(mu.StrVal, "%"))
			isPercent = true
		}
	default:
		value = int(mu.IntVal)
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(value), p)...)
	}
	if value == 0 {
		errs = append(errs, field.Invalid(p, *mu, "cannot be 0"))
	}
	if isPercent && value > 100 {
		errs = append(errs, field.Invalid(p, *mu, "must not be greater than 100%"))
	}
	return errs
}

func validateRetentionPolicyType(t appsv1.PersistentVolumeClaimRetentionPolicyType, path *field.Path) field.ErrorList {
	switch t {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, t, []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType),
		string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)})}
}

// validateClaimTemplate checks a claim template's spec as a claim's
// (ValidatePersistentVolumeClaimSpec). The claim rules name their fields
// from "spec"; here they sit under spec.volumeClaimTemplates[i].spec.
func validateClaimTemplate(t *corev1.PersistentVolumeClaim, path *field.Path) field.ErrorList {
	errs := core.ValidatePersistentVolumeClaim(t)
	for i := range errs {
		if rest, ok := strings.CutPrefix(errs[i].Field, "spec"); ok {
			errs[i].Field = path.Child("spec").String() + rest
		}
	}
	return errs
}

// validateStatefulSetSelector: a required, non-empty selector that
// matches the template's labels.
func validateStatefulSetSelector(spec *appsv1.StatefulSetSpec, path *field.Path) field.ErrorList {
	if spec.Selector == nil {
		return field.ErrorList{field.Required(path.Child("selector"), "")}
	}
	errs := metavalidation.ValidateLabelSelector(spec.Selector, metavalidation.LabelSelectorValidationOptions{}, path.Child("selector"))
	if len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(path.Child("selector"), spec.Selector, "empty selector is invalid for statefulset"))
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return append(errs, field.Invalid(path.Child("selector"), spec.Selector, ""))
	}
	if !sel.Empty() && !sel.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(path.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// templateToValidate is the template as the controller will make pods of
// it: hostname and subdomain are overwritten by the pod's identity, and
// each claim template becomes a volume of the same name (replacing any
// volume of the template called so), so a volumeMount may name a claim.
func templateToValidate(spec *appsv1.StatefulSetSpec) *corev1.PodTemplateSpec {
	t := spec.Template.DeepCopy()
	t.Spec.Hostname, t.Spec.Subdomain = "", ""
	if len(spec.VolumeClaimTemplates) == 0 {
		return t
	}
	claims := map[string]bool{}
	var volumes []corev1.Volume
	for _, c := range spec.VolumeClaimTemplates {
		claims[c.Name] = true
		volumes = append(volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
	}
	for _, v := range t.Spec.Volumes {
		if !claims[v.Name] {
			volumes = append(volumes, v)
		}
	}
	t.Spec.Volumes = volumes
	return t
}

// updateStatefulSetStatus is the status strategy: the status, labels and
// annotations come from the client, the spec stays; the counts may not
// exceed status.replicas, and collisionCount never goes down (it salts
// the revision names, which must stay unique).
func updateStatefulSetStatus(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	old, in := cur.(*appsv1.StatefulSet), next.(*appsv1.StatefulSet)
	out := old.DeepCopy()
	out.Status = *in.Status.DeepCopy()
	out.Labels, out.Annotations = in.Labels, in.Annotations
	errs := validateStatefulSetStatus(&out.Status, field.NewPath("status"))
	if oc, nc := old.Status.CollisionCount, out.Status.CollisionCount; oc != nil && (nc == nil || *nc < *oc) {
		errs = append(errs, field.Invalid(field.NewPath("status", "collisionCount"), ptr.Deref(nc, 0), "cannot be decremented"))
	}
	return out, errs
}

// validateStatefulSetStatus is ValidateStatefulSetStatus.
func validateStatefulSetStatus(st *appsv1.StatefulSetStatus, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value int32
	}{{"replicas", st.Replicas}, {"readyReplicas", st.ReadyReplicas}, {"currentReplicas", st.CurrentReplicas},
		{"updatedReplicas", st.UpdatedReplicas}, {"availableReplicas", st.AvailableReplicas}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.value), path.Child(f.name))...)
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(st.ObservedGeneration, path.Child("observedGeneration"))...)
	if st.CollisionCount != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*st.CollisionCount), path.Child("collisionCount"))...)
	}
	const msg = "cannot be greater than status.replicas"
	for _, f := range []struct {
		name  string
		value int32
	}{{"readyReplicas", st.ReadyReplicas}, {"currentReplicas", st.CurrentReplicas},
		{"updatedReplicas", st.UpdatedReplicas}, {"availableReplicas", st.AvailableReplicas}} {
		if f.value > st.Replicas {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, msg))
		}
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(path.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than status.readyReplicas"))
	}
	return errs
}
