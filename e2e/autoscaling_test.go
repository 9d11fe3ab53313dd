package e2e

import (
	"strings"
	"testing"
)

// HorizontalPodAutoscalers with the real kubectl: `kubectl autoscale`
// creates one, `kubectl get hpa` shows it as Kubernetes does before the
// HPA controller's first sync (its period is long here, so the status
// stays empty), and autoscaling/v1 and v2 are two views of the same
// object. TestHPAControllerWithoutAMetricsServer has the controller act.
func TestHorizontalPodAutoscalers(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{controllerManager: []string{"--horizontal-pod-autoscaler-sync-period", "1h"}})
	k := newKubectl(t, c)
	k.mustKubectl(t, "create", "deployment", "web", "--image=nginx")

	if out := k.mustKubectl(t, "autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=5"); strings.TrimSpace(out) != "horizontalpodautoscaler.autoscaling/web autoscaled" {
		t.Errorf("kubectl autoscale: %q", out)
	}
	tab := parseTable(t, k.mustKubectl(t, "get", "hpa"))
	if strings.Join(tab.header, " ") != "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE" {
		t.Fatalf("kubectl get hpa columns %v, want Kubernetes' NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE", tab.header)
	}
	row := tab.row(t, "NAME", "web")
	for col, want := range map[string]string{"REFERENCE": "Deployment/web", "TARGETS": "cpu: <unknown>/50%", "MINPODS": "1", "MAXPODS": "5", "REPLICAS": "0"} {
		if row[col] != want {
			t.Errorf("kubectl get hpa: %s is %q, want %q", col, row[col], want)
		}
	}

	// The same object through both versions.
	if got := k.mustKubectl(t, "get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage} {.spec.minReplicas}"); got != "autoscaling/v1 50 1" {
		t.Errorf("v1: %q", got)
	}
	if got := k.mustKubectl(t, "get", "horizontalpodautoscalers.v2.autoscaling", "web", "-o",
		"jsonpath={.apiVersion} {.spec.metrics[0].type} {.spec.metrics[0].resource.name} {.spec.metrics[0].resource.target.averageUtilization}"); got != "autoscaling/v2 Resource cpu 50" {
		t.Errorf("v2: %q", got)
	}

	// A v2 metric v1 cannot express is kept in v1's annotation.
	k.mustKubectl(t, "patch", "horizontalpodautoscalers.v2.autoscaling", "web", "--type=merge", "-p",
		`{"spec":{"metrics":[{"type":"Pods","pods":{"metric":{"name":"queue"},"target":{"type":"AverageValue","averageValue":"10"}}},`+
			`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]}}`)
	if got := k.mustKubectl(t, "get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", `jsonpath={.spec.targetCPUUtilizationPercentage} {.metadata.annotations.autoscaling\.alpha\.kubernetes\.io/metrics}`); got != `60 [{"type":"Pods","pods":{"metricName":"queue","targetAverageValue":"10"}}]` {
		t.Errorf("v1 after the v2 patch: %q", got)
	}
	if row := parseTable(t, k.mustKubectl(t, "get", "hpa", "web")).rows[0]; row["TARGETS"] != "<unknown>/10, cpu: <unknown>/60%" {
		t.Errorf("two metrics: %v", row)
	}

	// Kubernetes' validation and defaults.
	if errOut := k.mustFail(t, "autoscale", "deployment", "web", "--name=tiny", "--min=3", "--max=2"); !strings.Contains(errOut, "--max=MAXPODS must be larger or equal to --min=MINPODS") &&
		!strings.Contains(errOut, "must be greater than or equal to `minReplicas`") {
		t.Errorf("min above max: %s", errOut)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "bare.yaml", `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bare
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
`))
	if got := k.mustKubectl(t, "get", "hpa", "bare", "-o", "jsonpath={.spec.minReplicas} {.spec.metrics[0].resource.target.averageUtilization}"); got != "1 80" {
		t.Errorf("defaults: %q", got)
	}
	if errOut := k.mustFail(t, "patch", "hpa", "bare", "--type=merge", "-p", `{"spec":{"scaleTargetRef":{"apiVersion":"v1"}}}`); !strings.Contains(errOut,
		`spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group`) {
		t.Errorf("a core-group target: %s", errOut)
	}

	k.mustKubectl(t, "delete", "hpa", "web", "bare")
	if out := k.mustKubectl(t, "get", "hpa"); out != "" {
		t.Errorf("after delete: %q", out)
	}
}
