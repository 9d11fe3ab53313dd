package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestTopologySpreadConstraintsAreValidatedAsKubernetes(t *testing.T) {
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	zone := func(mut func(*corev1.TopologySpreadConstraint)) []corev1.TopologySpreadConstraint {
		c := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: app}
		if mut != nil {
			mut(&c)
		}
		return []corev1.TopologySpreadConstraint{c}
	}
	for _, tc := range []struct {
		name string
		cs   []corev1.TopologySpreadConstraint
		want string // "" for valid; else every error, joined by "; "
	}{
		{"a zone constraint with a selector is valid", zone(nil), ""},
		{"maxSkew must be positive", zone(func(c *corev1.TopologySpreadConstraint) { c.MaxSkew = 0 }),
			"spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"},
		{"topologyKey is required", zone(func(c *corev1.TopologySpreadConstraint) { c.TopologyKey = "" }),
			"spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"},
		{"whenUnsatisfiable must be known", zone(func(c *corev1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "Sometimes" }),
			`spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"`},
		{"the same key and action twice is a duplicate", append(zone(nil), zone(nil)...),
			`spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"`},
		{"minDomains only with DoNotSchedule", zone(func(c *corev1.TopologySpreadConstraint) {
			c.WhenUnsatisfiable, c.MinDomains = corev1.ScheduleAnyway, ptr.To[int32](2)
		}), "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"},
		{"minDomains must be positive", zone(func(c *corev1.TopologySpreadConstraint) { c.MinDomains = ptr.To[int32](0) }),
			"spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero"},
		{"a node inclusion policy must be known", zone(func(c *corev1.TopologySpreadConstraint) {
			c.NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicy("Maybe"))
		}), `spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Maybe": supported values: "Honor", "Ignore"`},
		{"matchLabelKeys may not repeat a selector key", zone(func(c *corev1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"app"} }),
			`spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector`},
		{"matchLabelKeys need a selector", zone(func(c *corev1.TopologySpreadConstraint) {
			c.LabelSelector, c.MatchLabelKeys = nil, []string{"pod-template-hash"}
		}), "spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"},
		{"a selector's operator must be known", zone(func(c *corev1.TopologySpreadConstraint) {
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
		}), `spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateTopologySpreadConstraints(tc.cs, field.NewPath("spec", "topologySpreadConstraints"))
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "; ") != tc.want {
				t.Errorf("got  %q\nwant %q", strings.Join(got, "; "), tc.want)
			}
		})
	}
}
