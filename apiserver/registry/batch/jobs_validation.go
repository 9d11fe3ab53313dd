package batch

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/registry/core"
)

// Kubernetes' pkg/apis/batch/validation for Jobs, in its words.

// Limits that keep .status.completedIndexes and .status.failedIndexes,
// which list indexes, to a size etcd and the controller can handle.
const (
	maxParallelismForIndexedJob             = 100_000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000

	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20
	maxManagedByLength                         = 63
	maxSucceededIndexesLength                  = 64 * 1024
	maxSuccessPolicyRules                      = 20
)

// The values Kubernetes accepts, sorted as its error messages list them.
var (
	podFailurePolicyActions = []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	onExitCodesOperators   = []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	onPodConditionsStatus  = []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
	podReplacementPolicies = []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}
)

// ValidateJobCreate checks a new Job: its generated selector, its spec,
// and a name short enough for its pods' hostnames.
func ValidateJobCreate(job *batchv1.Job) field.ErrorList {
	errs := validateGeneratedSelector(job)
	errs = append(errs, validateJobSpecWithSelector(&job.Spec, nil, field.NewPath("spec"))...)
	return append(errs, validateNameAllowsCompletions(job)...)
}

// ValidateJobUpdate checks a change to a Job: a valid spec, and only the
// changes Kubernetes allows (validateJobSpecUpdate).
func ValidateJobUpdate(job, old *batchv1.Job) field.ErrorList {
	errs := validateJobSpecWithSelector(&job.Spec, &old.Spec, field.NewPath("spec"))
	errs = append(errs, validateJobSpecUpdate(job, old)...)
	return append(errs, validateNameAllowsCompletions(job)...)
}

// ValidateJobTemplateSpec checks a CronJob's jobTemplate: a valid Job
// spec whose selector the server will generate for each Job. oldSpec is
// nil on create.
func ValidateJobTemplateSpec(spec, oldSpec *batchv1.JobTemplateSpec, path *field.Path) field.ErrorList {
	var oldJobSpec *batchv1.JobSpec
	if oldSpec != nil {
		oldJobSpec = &oldSpec.Spec
	}
	errs := validateJobSpec(&spec.Spec, oldJobSpec, path.Child("spec"))
	if spec.Spec.Selector != nil {
		errs = append(errs, field.Invalid(path.Child("spec", "selector"), spec.Spec.Selector, "`selector` will be auto-generated"))
	}
	if ptr.Deref(spec.Spec.ManualSelector, false) {
		errs = append(errs, field.NotSupported(path.Child("spec", "manualSelector"), spec.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return errs
}

// validateGeneratedSelector: unless the selector is manual, the template
// must carry the generated labels with the Job's UID and name, and the
// selector must select them; a user label that overrode one is an error.
func validateGeneratedSelector(job *batchv1.Job) field.ErrorList {
	if ptr.Deref(job.Spec.ManualSelector, false) || job.Spec.Selector == nil {
		return nil // no selector: validateJobSpecWithSelector says it is required
	}
	var errs field.ErrorList
	if job.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	meta := field.NewPath("spec", "template", "metadata")
	want := map[string]string{}
	for _, l := range []struct{ key, value string }{
		{legacyControllerUIDLabel, string(job.UID)}, {legacyJobNameLabel, job.Name},
		{batchv1.ControllerUidLabel, string(job.UID)}, {batchv1.JobNameLabel, job.Name},
	} {
		errs = append(errs, validateHasLabel(job.Spec.Template.Labels, meta, l.key, l.value)...)
		want[l.key] = l.value
	}
	if sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !sel.Matches(labels.Set(want)) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), job.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

// validateHasLabel is Kubernetes' ValidateHasLabel.
func validateHasLabel(have map[string]string, meta *field.Path, key, value string) field.ErrorList {
	path := meta.Child("labels").Key(key)
	got, ok := have[key]
	switch {
	case !ok:
		return field.ErrorList{field.Required(path, fmt.Sprintf("must be '%s'", value))}
	case got != value:
		return field.ErrorList{field.Invalid(path, have, fmt.Sprintf("must be '%s'", value))}
	}
	return nil
}

// validateNameAllowsCompletions: an Indexed Job's pods are named, and
// hostnamed, <job>-<index>, which must be a DNS label for every index.
func validateNameAllowsCompletions(job *batchv1.Job) field.ErrorList {
	if !isIndexed(&job.Spec) || job.Spec.Completions == nil || *job.Spec.Completions <= 0 {
		return nil
	}
	hostname := fmt.Sprintf("%s-%d", job.Name, *job.Spec.Completions-1)
	if len(validation.IsDNS1123Label(hostname)) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), job.Name,
			fmt.Sprintf("will not able to create pod with invalid DNS label: %s", hostname))}
	}
	return nil
}

// validateJobSpecWithSelector is Kubernetes' ValidateJobSpec: the spec,
// a required selector, and a template the selector matches.
func validateJobSpecWithSelector(spec, oldSpec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	errs := validateJobSpec(spec, oldSpec, path)
	if spec.Selector == nil {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	} else {
		errs = append(errs, metavalidation.ValidateLabelSelector(spec.Selector, metavalidation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(path.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// validateJobSpec checks what a Job and a CronJob's jobTemplate share.
func validateJobSpec(spec, _ *batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value *int32
	}{{"parallelism", spec.Parallelism}, {"completions", spec.Completions}, {"backoffLimit", spec.BackoffLimit},
		{"ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished}, {"backoffLimitPerIndex", spec.BackoffLimitPerIndex},
		{"maxFailedIndexes", spec.MaxFailedIndexes}} {
		if f.value != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*f.value), path.Child(f.name))...)
		}
		if f.name == "completions" && spec.ActiveDeadlineSeconds != nil { // Kubernetes' order
			errs = append(errs, apivalidation.ValidateNonnegativeField(*spec.ActiveDeadlineSeconds, path.Child("activeDeadlineSeconds"))...)
		}
	}
	if spec.MaxFailedIndexes != nil && spec.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(path.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if spec.ManagedBy != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(path.Child("managedBy"), *spec.ManagedBy)...)
		if len(*spec.ManagedBy) > maxManagedByLength {
			errs = append(errs, field.TooLong(path.Child("managedBy"), "", maxManagedByLength))
		}
	}
	errs = append(errs, validateCompletionMode(spec, path)...)
	if spec.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(spec, path.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if !isIndexed(spec) {
			errs = append(errs, field.Invalid(path.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(spec, path.Child("successPolicy"))...)
		}
	}
	errs = append(errs, validatePodReplacementPolicy(spec, path.Child("podReplacementPolicy"))...)
	errs = append(errs, core.ValidatePodTemplateSpec(&spec.Template, path.Child("template"))...)
	return append(errs, validateRestartPolicy(spec, path.Child("template", "spec", "restartPolicy"))...)
}

// validateRestartPolicy: a Job's pods end. Never: a failed pod is
// replaced by a new one; OnFailure: its container restarts in place.
// The pod default, Always, would never end, and a pod failure policy
// needs the failed pod's final state, so it requires Never.
func validateRestartPolicy(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	switch p := spec.Template.Spec.RestartPolicy; {
	case p == corev1.RestartPolicyAlways || p == "":
		return field.ErrorList{field.Required(path, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever))}
	case p != corev1.RestartPolicyOnFailure && p != corev1.RestartPolicyNever:
		return field.ErrorList{field.NotSupported(path, p, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	case spec.PodFailurePolicy != nil && p != corev1.RestartPolicyNever:
		return field.ErrorList{field.Invalid(path, p, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever))}
	}
	return nil
}

// validateCompletionMode: NonIndexed or Indexed, and what Indexed needs
// (completions, bounded parallelism and failed indexes); a limit per
// index only means something for Indexed Jobs.
func validateCompletionMode(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if mode := spec.CompletionMode; mode != nil {
		if *mode != batchv1.NonIndexedCompletion && *mode != batchv1.IndexedCompletion {
			errs = append(errs, field.NotSupported(path.Child("completionMode"), *mode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
		if *mode == batchv1.IndexedCompletion {
			errs = append(errs, validateIndexedLimits(spec, path)...)
		}
	}
	if spec.CompletionMode == nil || *spec.CompletionMode == batchv1.NonIndexedCompletion {
		if spec.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(path.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	return errs
}

func validateIndexedLimits(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	indexed := batchv1.IndexedCompletion
	if spec.Completions == nil {
		errs = append(errs, field.Required(path.Child("completions"), fmt.Sprintf("when completion mode is %s", indexed)))
	}
	if spec.Parallelism != nil && *spec.Parallelism > maxParallelismForIndexedJob {
		errs = append(errs, field.Invalid(path.Child("parallelism"), *spec.Parallelism,
			fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, indexed)))
	}
	if spec.Completions != nil && spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > *spec.Completions {
		errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
		errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
			fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if spec.Completions != nil && *spec.Completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
		if spec.MaxFailedIndexes == nil {
			errs = append(errs, field.Required(path.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if spec.Parallelism != nil && *spec.Parallelism > parallelismLimitForHighCompletions {
			errs = append(errs, field.Invalid(path.Child("parallelism"), *spec.Parallelism,
				fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", parallelismLimitForHighCompletions, completionsSoftLimit)))
		}
		if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
				fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
		}
	}
	return errs
}

// validatePodReplacementPolicy: Failed or TerminatingOrFailed, and only
// Failed with a pod failure policy.
func validatePodReplacementPolicy(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	p := spec.PodReplacementPolicy
	switch {
	case p == nil:
	case spec.PodFailurePolicy != nil && *p != batchv1.Failed:
		return field.ErrorList{field.NotSupported(path, *p, []batchv1.PodReplacementPolicy{batchv1.Failed})}
	case !slices.Contains(podReplacementPolicies, *p):
		return field.ErrorList{field.NotSupported(path, *p, podReplacementPolicies)}
	}
	return nil
}

// validatePodFailurePolicy checks each rule: an action the Job supports,
// and exactly one of onExitCodes (naming a container of the template) and
// onPodConditions.
func validatePodFailurePolicy(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := path.Child("rules")
	if n := len(spec.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rules, n, maxPodFailurePolicyRules))
	}
	containers := map[string]bool{}
	for _, c := range append(slices.Clone(spec.Template.Spec.Containers), spec.Template.Spec.InitContainers...) {
		containers[c.Name] = true
	}
	for i := range spec.PodFailurePolicy.Rules {
		errs = append(errs, validatePodFailurePolicyRule(spec, &spec.PodFailurePolicy.Rules[i], rules.Index(i), containers)...)
	}
	return errs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, path *field.Path, containers map[string]bool) field.ErrorList {
	var errs field.ErrorList
	action := path.Child("action")
	switch {
	case rule.Action == "":
		errs = append(errs, field.Required(action, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(action, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, rule.Action):
		errs = append(errs, field.NotSupported(action, rule.Action, podFailurePolicyActions))
	}
	if rule.OnExitCodes != nil {
		errs = append(errs, validateOnExitCodes(rule.OnExitCodes, path.Child("onExitCodes"), containers)...)
	}
	if len(rule.OnPodConditions) > 0 {
		errs = append(errs, validateOnPodConditions(rule.OnPodConditions, path.Child("onPodConditions"))...)
	}
	if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
		errs = append(errs, field.Invalid(path, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0 {
		errs = append(errs, field.Invalid(path, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(patterns) > maxPodFailurePolicyOnPodConditionsPatterns {
		errs = append(errs, field.TooMany(path, len(patterns), maxPodFailurePolicyOnPodConditionsPatterns))
	}
	for j, p := range patterns {
		for _, msg := range validation.IsQualifiedName(string(p.Type)) {
			errs = append(errs, field.Invalid(path.Index(j).Child("type"), string(p.Type), msg))
		}
		status := path.Index(j).Child("status")
		switch {
		case p.Status == "":
			errs = append(errs, field.Required(status, fmt.Sprintf("valid values: %q", onPodConditionsStatus)))
		case !slices.Contains(onPodConditionsStatus, p.Status):
			errs = append(errs, field.NotSupported(status, p.Status, onPodConditionsStatus))
		}
	}
	return errs
}

// validateOnExitCodes: In or NotIn a set of distinct exit codes, in
// increasing order; In 0 is meaningless, as a pod that exits 0 did not fail.
func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, path *field.Path, containers map[string]bool) field.ErrorList {
	var errs field.ErrorList
	op := path.Child("operator")
	switch {
	case req.Operator == "":
		errs = append(errs, field.Required(op, fmt.Sprintf("valid values: %q", onExitCodesOperators)))
	case !slices.Contains(onExitCodesOperators, req.Operator):
		errs = append(errs, field.NotSupported(op, req.Operator, onExitCodesOperators))
	}
	if req.ContainerName != nil && !containers[*req.ContainerName] {
		errs = append(errs, field.Invalid(path.Child("containerName"), *req.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	values := path.Child("values")
	switch n := len(req.Values); {
	case n == 0:
		errs = append(errs, field.Invalid(values, req.Values, "at least one value is required"))
	case n > maxPodFailurePolicyOnExitCodesValues:
		errs = append(errs, field.TooMany(values, n, maxPodFailurePolicyOnExitCodesValues))
	}
	seen := map[int32]bool{}
	ordered := true
	for j, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(values.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(values.Index(j), v))
		}
		seen[v] = true
		if j > 0 && req.Values[j-1] > v {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(values, req.Values, "must be ordered"))
	}
	return errs
}

// validateSuccessPolicy: one to twenty rules, each naming succeeded
// indexes, a count, or both, that completions can satisfy.
func validateSuccessPolicy(spec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := path.Child("rules")
	switch n := len(spec.SuccessPolicy.Rules); {
	case n == 0:
		errs = append(errs, field.Required(rules, "at least one rules must be specified when the successPolicy is specified"))
	case n > maxSuccessPolicyRules:
		errs = append(errs, field.TooMany(rules, n, maxSuccessPolicyRules))
	}
	completions := ptr.Deref(spec.Completions, 0)
	for i, rule := range spec.SuccessPolicy.Rules {
		path := rules.Index(i)
		if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
			errs = append(errs, field.Required(path, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if rule.SucceededIndexes != nil {
			p := path.Child("succeededIndexes")
			if len(*rule.SucceededIndexes) > maxSucceededIndexesLength {
				errs = append(errs, field.TooLong(p, "", maxSucceededIndexesLength))
			}
			var err error
			if total, err = validateIndexesFormat(*rule.SucceededIndexes, completions); err != nil {
				errs = append(errs, field.Invalid(p, *rule.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err)))
			}
		}
		if rule.SucceededCount != nil {
			p := path.Child("succeededCount")
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*rule.SucceededCount), p)...)
			if *rule.SucceededCount > completions {
				errs = append(errs, field.Invalid(p, *rule.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if rule.SucceededIndexes != nil && *rule.SucceededCount > total {
				errs = append(errs, field.Invalid(p, *rule.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// validateJobSpecUpdate: most of a Job's spec is fixed once it runs.
// What may change: parallelism, activeDeadlineSeconds, suspend,
// backoffLimit, maxFailedIndexes, ttlSecondsAfterFinished; completions
// of an Indexed Job together with parallelism (elastic Indexed Jobs); and
// the pod template of a suspended Job: its scheduling directives, labels
// and annotations, and its containers' resources, while it has not
// started, or has been suspended, with no pod active.
func validateJobSpecUpdate(job, old *batchv1.Job) field.ErrorList {
	spec, oldSpec, path := &job.Spec, &old.Spec, field.NewPath("spec")
	errs := validateCompletionsUpdate(spec, oldSpec, path.Child("completions"))
	errs = append(errs, apivalidation.ValidateImmutableField(spec.Selector, oldSpec.Selector, path.Child("selector"))...)
	errs = append(errs, validatePodTemplateUpdate(spec, old, path)...)
	for _, f := range []struct {
		name     string
		cur, old any
	}{
		{"completionMode", spec.CompletionMode, oldSpec.CompletionMode},
		{"podFailurePolicy", spec.PodFailurePolicy, oldSpec.PodFailurePolicy},
		{"backoffLimitPerIndex", spec.BackoffLimitPerIndex, oldSpec.BackoffLimitPerIndex},
		{"managedBy", spec.ManagedBy, oldSpec.ManagedBy},
		{"successPolicy", spec.SuccessPolicy, oldSpec.SuccessPolicy},
	} {
		errs = append(errs, apivalidation.ValidateImmutableField(f.cur, f.old, path.Child(f.name))...)
	}
	return errs
}

// validateCompletionsUpdate: completions is fixed, except that an Indexed
// Job may be scaled by changing completions and parallelism together.
func validateCompletionsUpdate(spec, oldSpec *batchv1.JobSpec, path *field.Path) field.ErrorList {
	if !isIndexed(spec) {
		return apivalidation.ValidateImmutableField(spec.Completions, oldSpec.Completions, path)
	}
	if ptr.Equal(spec.Completions, oldSpec.Completions) || spec.Completions == nil {
		return nil // a missing one is already Required
	}
	if !ptr.Equal(spec.Completions, spec.Parallelism) {
		return field.ErrorList{field.Invalid(path, spec.Completions, fmt.Sprintf("can only be modified in tandem with %s", path.Root().Child("parallelism")))}
	}
	return nil
}

// validatePodTemplateUpdate: the template of a running Job is fixed. A
// suspended Job that has not started, or was suspended, and has no active
// pod may change its scheduling directives (node affinity, nodeSelector,
// tolerations, scheduling gates), template labels and annotations, and
// its containers' resources (Kubernetes' features
// MutableSchedulingDirectivesForSuspendedJobs and
// MutablePodResourcesForSuspendedJobs, on by default).
func validatePodTemplateUpdate(spec *batchv1.JobSpec, old *batchv1.Job, path *field.Path) field.ErrorList {
	tmpl, oldTmpl := &spec.Template, &old.Spec.Template
	suspended := ptr.Deref(old.Spec.Suspend, false)
	mutable := suspended && (old.Status.StartTime == nil || anyConditionTrue(old.Status.Conditions, batchv1.JobSuspended)) && old.Status.Active == 0
	if !mutable {
		return apivalidation.ValidateImmutableField(tmpl, oldTmpl, path.Child("template"))
	}
	// Compare with the old template as it would be with the new
	// directives, so that only a change elsewhere is an error.
	oldTmpl = oldTmpl.DeepCopy()
	switch {
	case tmpl.Spec.Affinity == nil && oldTmpl.Spec.Affinity != nil:
		oldTmpl.Spec.Affinity.NodeAffinity = nil
		if *oldTmpl.Spec.Affinity == (corev1.Affinity{}) {
			oldTmpl.Spec.Affinity = nil
		}
	case tmpl.Spec.Affinity != nil && oldTmpl.Spec.Affinity == nil:
		oldTmpl.Spec.Affinity = &corev1.Affinity{NodeAffinity: tmpl.Spec.Affinity.NodeAffinity}
	case tmpl.Spec.Affinity != nil:
		oldTmpl.Spec.Affinity.NodeAffinity = tmpl.Spec.Affinity.NodeAffinity
	}
	oldTmpl.Spec.NodeSelector, oldTmpl.Spec.Tolerations = tmpl.Spec.NodeSelector, tmpl.Spec.Tolerations
	oldTmpl.Annotations, oldTmpl.Labels = tmpl.Annotations, tmpl.Labels
	oldTmpl.Spec.SchedulingGates = tmpl.Spec.SchedulingGates
	// Only the containers' resources may differ now.
	for _, pair := range []struct{ cur, old []corev1.Container }{
		{tmpl.Spec.Containers, oldTmpl.Spec.Containers}, {tmpl.Spec.InitContainers, oldTmpl.Spec.InitContainers},
	} {
		if len(pair.cur) != len(pair.old) {
			continue
		}
		for i := range pair.cur {
			if pair.cur[i].Name == pair.old[i].Name {
				pair.old[i].Resources = pair.cur[i].Resources
			}
		}
	}
	return apivalidation.ValidateImmutableField(tmpl.Spec, oldTmpl.Spec, path.Child("template.spec"))
}

func isIndexed(spec *batchv1.JobSpec) bool {
	return ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}

// anyConditionTrue is Kubernetes' IsConditionTrue: any condition of type t
// with status True.
func anyConditionTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	return slices.ContainsFunc(conds, func(c batchv1.JobCondition) bool { return c.Type == t && c.Status == corev1.ConditionTrue })
}
