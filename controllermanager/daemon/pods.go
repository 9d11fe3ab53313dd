package daemon

import (
	"errors"
	"maps"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/podcondition"
)

// The labels every daemon pod carries, saying which template it runs.
const (
	// hashLabel is the controller-revision-hash of the pod's template,
	// the suffix of its ControllerRevision's name: a rolling update
	// replaces the pods whose hash is not the current revision's.
	hashLabel = appsv1.DefaultDaemonSetUniqueLabelKey
	// generationLabel is pod-template-generation, the DaemonSet's
	// deprecated.daemonset.template.generation when the pod was made: how
	// DaemonSets told new pods from old before revisions (Kubernetes
	// 1.6), still honoured.
	generationLabel = "pod-template-generation" // extensions/v1beta1 DaemonSetTemplateGenerationKey
)

// podTemplate is the template of the daemon pods of one sync: the
// DaemonSet's, with the default tolerations and the two labels above.
func podTemplate(ds *appsv1.DaemonSet, hash string) *corev1.PodTemplateSpec {
	t := ds.Spec.Template.DeepCopy()
	t.Spec.Tolerations = daemonTolerations(&t.Spec)
	t.Labels = maps.Clone(t.Labels)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if gen, ok := templateGeneration(ds); ok {
		t.Labels[generationLabel] = strconv.FormatInt(gen, 10)
	}
	if hash != "" {
		t.Labels[hashLabel] = hash
	}
	return t
}

// templateGeneration reads the DaemonSet's template generation; a value
// that does not parse is ignored (the hash still tells the pods apart).
func templateGeneration(ds *appsv1.DaemonSet) (int64, bool) {
	v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return 0, false
	}
	gen, err := strconv.ParseInt(v, 10, 64)
	return gen, err == nil
}

// isUpdated reports whether pod runs the DaemonSet's current template:
// its hash is the current revision's, or (for pods of old controllers)
// its template generation is the DaemonSet's (Kubernetes' IsPodUpdated).
func isUpdated(pod *corev1.Pod, hash string, ds *appsv1.DaemonSet) bool {
	if hash != "" && pod.Labels[hashLabel] == hash {
		return true
	}
	gen, ok := templateGeneration(ds)
	return ok && pod.Labels[generationLabel] == strconv.FormatInt(gen, 10)
}

// newPod is the daemon pod for node: the template, named after the
// DaemonSet, owned by it, and pinned to the node by the node affinity
// that replaces any the template requires:
//
//	requiredDuringSchedulingIgnoredDuringExecution:
//	  nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [<node>]}]}]
//
// Since Kubernetes 1.12 the controller does not set spec.nodeName itself:
// the scheduler binds the pod (seed 000, steps 9–11), so daemon pods go
// through the same filters, priorities and preemption as every other pod.
// Replacing the required terms is safe: placement already checked that
// the node matches them.
func newPod(ds *appsv1.DaemonSet, tmpl *corev1.PodTemplateSpec, node string) *corev1.Pod {
	t := tmpl.DeepCopy()
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    podNamePrefix(ds.Name),
			Namespace:       ds.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Spec: t.Spec,
	}
	pinToNode(&pod.Spec, node)
	return pod
}

// podNamePrefix is "<name>-", cut so that the generated name stays a
// valid name (Kubernetes' getPodsPrefix).
func podNamePrefix(name string) string {
	prefix := name + "-"
	if len(apivalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		prefix = name
	}
	return prefix
}

// pinToNode sets the node affinity of newPod's comment (Kubernetes'
// ReplaceDaemonSetPodNodeNameNodeAffinity).
func pinToNode(spec *corev1.PodSpec, node string) {
	required := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = required
}

var errNoTargetNode = errors.New("no node name in spec.nodeName nor in a matchFields metadata.name affinity")

// targetNode is the node a daemon pod is for: spec.nodeName once bound,
// before that the node of its matchFields affinity (Kubernetes'
// GetTargetNodeName). A pod with neither (made by hand and adopted) is
// for no node, and only counted once it is bound.
func targetNode(pod *corev1.Pod) (string, error) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", errNoTargetNode
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range term.MatchFields {
			if req.Key == metav1.ObjectNameField && req.Operator == corev1.NodeSelectorOpIn {
				if len(req.Values) != 1 {
					return "", errors.New("the matchFields value of metadata.name is not unique")
				}
				return req.Values[0], nil
			}
		}
	}
	return "", errNoTargetNode
}

// isTerminal: the pod's containers have all stopped for good.
func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

// isAvailable: ready for at least minReadySeconds (podutil.IsPodAvailable).
func isAvailable(pod *corev1.Pod, minReadySeconds int32, now metav1.Time) bool {
	c := podcondition.Get(pod, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(secondsOf(minReadySeconds)).Before(now.Time)
}

// byAge orders the pods of one node as Kubernetes'
// podByCreationTimestampAndPhase: bound pods first, then the oldest, then
// by name. The first is the one status reports and the one kept when a
// node has too many.
func byAge(a, b *corev1.Pod) int {
	if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
		if a.Spec.NodeName != "" {
			return -1
		}
		return 1
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		if a.CreationTimestamp.Before(&b.CreationTimestamp) {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

func secondsOf(n int32) time.Duration { return time.Duration(n) * time.Second }
