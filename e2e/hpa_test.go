package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// The HPA controller in the real controller manager, with least
// privilege (its own service account, kube-system/horizontal-pod-autoscaler,
// holding Kubernetes' role for it), and no metrics server: `kubectl
// describe hpa` says why no count can be computed, in Kubernetes' words,
// and a target scaled above maxReplicas is brought back through its scale
// subresource whatever the metrics.
func TestHPAControllerWithoutAMetricsServer(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true, controllerManager: []string{"--horizontal-pod-autoscaler-sync-period", "1s"}})
	k := newKubectl(t, c)
	k.mustKubectl(t, "create", "deployment", "web", "--image=nginx")
	k.mustKubectl(t, "autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=5")

	conditions := []*regexp.Regexp{
		regexp.MustCompile(`AbleToScale\s+True\s+SucceededGetScale\s+the HPA controller was able to get the target's current scale`),
		regexp.MustCompile(`ScalingActive\s+False\s+FailedGetResourceMetric\s+the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: `),
		regexp.MustCompile(`Warning\s+FailedGetResourceMetric\s+.*horizontal-pod-autoscaler\s+failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: `),
		regexp.MustCompile(`Warning\s+FailedComputeMetricsReplicas\s+.*horizontal-pod-autoscaler\s+invalid metrics \(1 invalid out of 1\), first error is: failed to get cpu resource metric value: `),
	}
	testserver.EventuallyWithin(t, 60*time.Second, "kubectl describe hpa says the metrics cannot be read", func() (bool, string) {
		out := k.mustKubectl(t, "describe", "hpa", "web")
		for _, re := range conditions {
			if !re.MatchString(out) {
				return false, "no " + re.String() + " in:\n" + out
			}
		}
		return true, ""
	})
	row := parseTable(t, k.mustKubectl(t, "get", "hpa", "web")).rows[0]
	if row["TARGETS"] != "cpu: <unknown>/50%" || row["REPLICAS"] != "1" {
		t.Errorf("kubectl get hpa: %v, want cpu: <unknown>/50%% and 1 replica", row)
	}

	k.mustKubectl(t, "scale", "deployment", "web", "--replicas=8")
	testserver.EventuallyWithin(t, 60*time.Second, "the deployment back at maxReplicas", func() (bool, string) {
		got := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
		return got == "5", "spec.replicas " + got
	})
	// The event stays; AbleToScale's SucceededRescale does not: the next
	// sync (1 s later) sets SucceededGetScale again, as upstream's does.
	if out := k.mustKubectl(t, "describe", "hpa", "web"); !regexp.MustCompile(
		`Normal\s+SuccessfulRescale\s+.*horizontal-pod-autoscaler\s+New size: 5; reason: Current number of replicas above Spec.MaxReplicas`).MatchString(out) {
		t.Errorf("kubectl describe hpa after the rescale:\n%s", out)
	}
}
