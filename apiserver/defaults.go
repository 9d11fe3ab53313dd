package apiserver

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaulting fills what the user left out, with the values Kubernetes'
// defaulters (pkg/apis/core/v1/defaults.go, apps/v1/defaults.go) and
// default admission plugins use, so `kubectl get -o yaml` shows the same
// object a real cluster would.

func defaultPodSpec(spec *corev1.PodSpec) {
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr(corev1.DefaultEnableServiceLinks)
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	// A limit without a request requests the limit (Kubernetes defaulting).
	for name, lim := range c.Resources.Limits {
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		if _, ok := c.Resources.Requests[name]; !ok {
			c.Resources.Requests[name] = lim.DeepCopy()
		}
	}
}

// pullPolicyFor: ":latest" or no tag means Always, any other tag or a digest
// means IfNotPresent.
func pullPolicyFor(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "" || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// defaultTolerations is the DefaultTolerationSeconds admission plugin: a pod
// stays 300s on a node that turns not-ready or unreachable before the taint
// manager evicts it, unless it says otherwise.
func defaultTolerations(spec *corev1.PodSpec) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		found := false
		for _, t := range spec.Tolerations {
			if (t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)) &&
				(t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute) {
				found = true
			}
		}
		if !found {
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr[int64](300),
			})
		}
	}
}

func defaultReplicas(r **int32) {
	if *r == nil {
		*r = ptr[int32](1)
	}
}

func defaultDeployment(d *appsv1.Deployment) {
	defaultReplicas(&d.Spec.Replicas)
	defaultPodSpec(&d.Spec.Template.Spec)
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
		d.Spec.RevisionHistoryLimit = ptr[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr[int32](600)
	}
}

func ptr[T any](v T) *T { return &v }
