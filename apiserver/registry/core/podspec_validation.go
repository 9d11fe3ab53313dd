package core

import (
	"fmt"
	pathpkg "path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of a pod spec follows Kubernetes for the fields mkube uses:
// each error names its field path, and the API server answers 422 Invalid
// with one cause per error. Pod templates (ReplicaSets, Deployments,
// ReplicationControllers) are checked by the same rules.

var (
	restartPolicies = sets.New(corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
	dnsPolicies     = sets.New(corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet, corev1.DNSDefault, corev1.DNSNone)
	pullPolicies    = sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
	protocols       = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)
	taintEffects    = sets.New(corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)
	tolerationOps   = sets.New(corev1.TolerationOpEqual, corev1.TolerationOpExists, "")
	nodeSelectorOps = sets.New(corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt)
)

// ValidatePodSpec checks the parts of a pod spec mkube acts on.
func ValidatePodSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "must have at least one container"))
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(spec.InitContainers, path.Child("initContainers"), names)...)
	errs = append(errs, validateContainers(spec.Containers, path.Child("containers"), names)...)
	for i, c := range spec.InitContainers {
		errs = append(errs, validateProbes(c, true, path.Child("initContainers").Index(i))...)
	}
	for i, c := range spec.Containers {
		errs = append(errs, validateProbes(c, false, path.Child("containers").Index(i))...)
	}
	if !restartPolicies.Has(spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), spec.RestartPolicy, sets.List(restartPolicies)))
	}
	if !dnsPolicies.Has(spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(path.Child("dnsPolicy"), spec.DNSPolicy, sets.List(dnsPolicies)))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	for k, v := range spec.NodeSelector {
		errs = append(errs, metavalidation.ValidateLabels(map[string]string{k: v}, path.Child("nodeSelector"))...)
	}
	for i, t := range spec.Tolerations {
		errs = append(errs, validateToleration(t, path.Child("tolerations").Index(i))...)
	}
	errs = append(errs, validateAffinity(spec.Affinity, path.Child("affinity"))...)
	errs = append(errs, validateSysctls(spec, path.Child("securityContext", "sysctls"))...)
	errs = append(errs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, path.Child("topologySpreadConstraints"))...)
	volumes := sets.New[string]()
	for i, v := range spec.Volumes {
		p := path.Child("volumes").Index(i).Child("name")
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(p, v.Name, msg))
		}
		if volumes.Has(v.Name) {
			errs = append(errs, field.Duplicate(p, v.Name))
		}
		volumes.Insert(v.Name)
		if v.Projected != nil {
			errs = append(errs, validateProjectedSources(v.Projected, path.Child("volumes").Index(i).Child("projected"))...)
		}
	}
	return errs
}

func validateContainers(cs []corev1.Container, path *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		p := path.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			if c.Name != "" {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		if !pullPolicies.Has(c.ImagePullPolicy) {
			errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, sets.List(pullPolicies)))
		}
		for j, port := range c.Ports {
			pp := p.Child("ports").Index(j)
			if port.ContainerPort < 1 || port.ContainerPort > 65535 {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, "must be between 1 and 65535, inclusive"))
			}
			if port.HostPort < 0 || port.HostPort > 65535 {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, "must be between 1 and 65535, inclusive"))
			}
			if !protocols.Has(port.Protocol) {
				errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, sets.List(protocols)))
			}
		}
		errs = append(errs, validateResources(c.Resources, p.Child("resources"))...)
		errs = append(errs, validateSubPaths(c.VolumeMounts, p.Child("volumeMounts"))...)
	}
	return errs
}

// validateSubPaths is Kubernetes' rule for a volumeMount's subPath and
// subPathExpr (ValidateVolumeMounts): each a relative path without "..",
// and not both. Kubernetes names the relative-path errors by the list,
// not the item (spec.containers[0].volumeMounts.subPathExpr), and so
// does mkube, for the same message.
func validateSubPaths(mounts []corev1.VolumeMount, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, m := range mounts {
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, path.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(path.Index(i).Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, path.Child("subPathExpr"))...)
		}
	}
	return errs
}

// validateLocalDescendingPath: p stays below where it starts.
func validateLocalDescendingPath(p string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pathpkg.IsAbs(p) {
		errs = append(errs, field.Invalid(path, p, "must be a relative path"))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			errs = append(errs, field.Invalid(path, p, "must not contain '..'"))
			break // one is enough, even for ../../..
		}
	}
	return errs
}

// validateResources: quantities are non-negative and requests never exceed
// limits ("must be less than or equal to cpu limit", as Kubernetes says).
func validateResources(r corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(list corev1.ResourceList, p *field.Path) {
		for name, q := range list {
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(p.Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	check(r.Requests, path.Child("requests"))
	check(r.Limits, path.Child("limits"))
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}

func validateToleration(t corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(path.Child("key"), t.Key, msg))
		}
	}
	if t.Key == "" && t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
	}
	if !tolerationOps.Has(t.Operator) {
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
	}
	if t.Operator == corev1.TolerationOpExists && t.Value != "" {
		errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "value must be empty when `operator` is 'Exists'"))
	}
	if t.Effect != "" && !taintEffects.Has(t.Effect) {
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(path.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
	}
	return errs
}

func validateTaints(taints []corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range taints {
		p := path.Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		if t.Value != "" {
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		}
		if !taintEffects.Has(t.Effect) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, sets.List(taintEffects)))
		}
		if id := t.Key + ":" + string(t.Effect); seen.Has(id) {
			errs = append(errs, field.Duplicate(p, "taints must be unique by key and effect pair"))
		} else {
			seen.Insert(id)
		}
	}
	return errs
}

func validateAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var errs field.ErrorList
	na := path.Child("nodeAffinity")
	if req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		errs = append(errs, ValidateNodeSelector(req, na.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
	}
	for i, pt := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		p := na.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if pt.Weight < 1 || pt.Weight > 100 {
			errs = append(errs, field.Invalid(p.Child("weight"), pt.Weight, "must be in the range 1-100"))
		}
		errs = append(errs, validateNodeSelectorTerm(pt.Preference, p.Child("preference"))...)
	}
	return errs
}

// ValidateNodeSelector is Kubernetes' ValidateNodeSelector: at least one
// term, each a valid term. Pods' required node affinity, a volume's node
// affinity and the nodes a ResourceSlice's devices are on are all one.
func ValidateNodeSelector(sel *corev1.NodeSelector, path *field.Path) field.ErrorList {
	terms := path.Child("nodeSelectorTerms")
	var errs field.ErrorList
	if len(sel.NodeSelectorTerms) == 0 {
		errs = append(errs, field.Required(terms, "must have at least one node selector term"))
	}
	for i, t := range sel.NodeSelectorTerms {
		errs = append(errs, validateNodeSelectorTerm(t, terms.Index(i))...)
	}
	return errs
}

func validateNodeSelectorTerm(t corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		if !nodeSelectorOps.Has(r.Operator) {
			errs = append(errs, field.NotSupported(p.Child("operator"), r.Operator, sets.List(nodeSelectorOps)))
			continue
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		}
	}
	return errs
}
