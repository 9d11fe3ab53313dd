package autoscaling

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// webHPA is `kubectl autoscale deployment web --cpu-percent=50 --max=5`,
// defaulted.
func webHPA() *autoscalingv2.HorizontalPodAutoscaler {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    5, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)},
		},
	}
	defaultHPA(hpa)
	return hpa
}

func objectMetric() autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"},
		Metric:          autoscalingv2.MetricIdentifier{Name: "requests-per-second"},
		Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("100"))}}}
}

func TestValidateHPA(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*autoscalingv2.HorizontalPodAutoscaler)
		want   []string // the errors, each a prefix of Kubernetes' message; none if empty
	}{
		{name: "kubectl autoscale's autoscaler is valid", change: func(*autoscalingv2.HorizontalPodAutoscaler) {}},
		{name: "maxReplicas must be set", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 },
			want: []string{"spec.maxReplicas: Required value: must be set and greater than 0", "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"}},
		{name: "maxReplicas may not be below minReplicas", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](6) },
			want: []string{"spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"}},
		{name: "minReplicas may not be negative", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](-1) },
			want: []string{"spec.minReplicas: Invalid value: -1: must be greater than or equal to 0"}},
		{name: "scaling to zero needs an Object or External metric", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](0) },
			want: []string{"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"}},
		{name: "scaling to zero with an Object metric is allowed", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.MinReplicas = ptr.To[int32](0)
			h.Spec.Metrics = append(h.Spec.Metrics, objectMetric())
		}},
		{name: "the scale target is named by kind and name", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name = "", "a/b"
		}, want: []string{"spec.scaleTargetRef.kind: Required value", `spec.scaleTargetRef.name: Invalid value: "a/b": may not contain '/'`}},
		{name: "the scale target's apiVersion names a group", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "v1" },
			want: []string{`spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group`}},
		{name: "a ReplicationController is in the core group", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "web"}
		}},
		{name: "a metric's type must be known", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Magic" },
			// Kubernetes says it twice: once for the set, once in its switch.
			want: []string{`spec.metrics[0].type: Unsupported value: "Magic"`, `spec.metrics[0].type: Unsupported value: "Magic"`}},
		{name: "a metric fills the source of its type", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Type = autoscalingv2.PodsMetricSourceType
		},
			want: []string{"spec.metrics[0].pods: Required value: must populate information for the given metric source"}},
		{name: "a metric fills one source only", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Object = objectMetric().Object },
			want: []string{"spec.metrics[0].object: Forbidden: must populate the given metric source only"}},
		{name: "a utilization target is above 0", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](0)
		}, want: []string{"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"}},
		{name: "a resource metric targets a utilization or a value, not both", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageValue = ptr.To(resource.MustParse("100m"))
		}, want: []string{"spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"}},
		{name: "a target type is one of three", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Resource.Target.Type = "Percent" },
			want: []string{`spec.metrics[0].resource.target.type: Invalid value: "Percent": must be either Utilization, Value, or AverageValue`}},
		{name: "a pods metric targets a positive average value", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType}}}}
		}, want: []string{"spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue"}},
		{name: "an object metric names its object and metric", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			m := objectMetric()
			m.Object.DescribedObject.Name, m.Object.Metric.Name = "", ""
			h.Spec.Metrics = []autoscalingv2.MetricSpec{m}
		}, want: []string{"spec.metrics[0].object.describedObject.name: Required value", "spec.metrics[0].object.metric.name: Required value: must specify a metric name"}},
		{name: "a container resource metric names a container resource", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name: corev1.ResourcePods, Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}}}
		}, want: []string{`spec.metrics[0].containerResource.name: Invalid value: "pods": must be a standard resource for containers`}},
		{name: "a scaling rule has at least one policy", change: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Behavior.ScaleDown.Policies = nil },
			want: []string{"spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"}},
		{name: "a scaling policy's period is at most half an hour", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.Policies[0].PeriodSeconds = 1801
		}, want: []string{"spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800"}},
		{name: "a stabilization window is at most an hour", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](3601)
		}, want: []string{"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600"}},
		{name: "selectPolicy is Max, Min or Disabled", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleUp.SelectPolicy = ptr.To[autoscalingv2.ScalingPolicySelect]("Most")
		}, want: []string{`spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"`}},
		{name: "a tolerance is not negative", change: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior.ScaleDown.Tolerance = ptr.To(resource.MustParse("-0.1"))
		}, want: []string{`spec.behavior.scaleDown.tolerance: Invalid value: "-100m": must be greater than or equal to 0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hpa := webHPA()
			hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
			defaultHPA(hpa)
			tc.change(hpa)
			errs := ValidateHPA(hpa, nil)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %q", len(errs), errs, tc.want)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(errs[i].Error(), want) {
					t.Errorf("error %d: %q, want it to start with %q", i, errs[i].Error(), want)
				}
			}
		})
	}
}

// An update that keeps the scale target's kind and apiVersion keeps an
// invalid apiVersion stored before the rule existed.
func TestAnUpdateKeepsAnOldInvalidScaleTargetAPIVersion(t *testing.T) {
	old := webHPA()
	old.Spec.ScaleTargetRef.APIVersion = "v1"
	next := old.DeepCopy()
	next.Spec.MaxReplicas = 7
	if errs := ValidateHPA(next, old); len(errs) != 0 {
		t.Errorf("update: %v", errs)
	}
	if errs := ValidateHPA(next, nil); len(errs) != 1 {
		t.Errorf("create: %v", errs)
	}
}

func TestValidateHPAStatus(t *testing.T) {
	hpa := webHPA()
	hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas = -1, 2
	errs := ValidateHPAStatus(hpa)
	if len(errs) != 1 || errs[0].Error() != "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0" {
		t.Errorf("got %v", errs)
	}
}
