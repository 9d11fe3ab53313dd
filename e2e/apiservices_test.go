package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// metricsAPIService is how metrics-server registers itself: an
// aggregated API server behind a Service. Without a server behind the
// Service, mkube says, as Kubernetes would, that it is not available.
const metricsAPIService = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  group: metrics.k8s.io
  version: v1beta1
  service:
    name: metrics-server
    namespace: kube-system
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
`

const gadgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`

// APIServices with the real kubectl: every built-in group-version is
// registered Local and available, a custom resource's group-version
// comes and goes with its definition, and an aggregated API server's is
// unavailable while nothing serves its Service (aggregator_test.go has
// one that serves).
func TestAPIServices(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)

	out := k.mustKubectl(t, "get", "apiservices")
	tab := parseTable(t, out)
	if strings.Join(tab.header, " ") != "NAME SERVICE AVAILABLE AGE" {
		t.Fatalf("kubectl get apiservices columns %v, want Kubernetes' NAME SERVICE AVAILABLE AGE", tab.header)
	}
	for _, name := range []string{"v1.", "v1.apps", "v1.autoscaling", "v2.autoscaling", "v1.apiextensions.k8s.io",
		"v1.rbac.authorization.k8s.io", "v1.storage.k8s.io"} {
		if row := tab.row(t, "NAME", name); row["SERVICE"] != "Local" || row["AVAILABLE"] != "True" {
			t.Errorf("%s: %v", name, row)
		}
	}
	for _, r := range tab.rows {
		if r["SERVICE"] != "Local" || r["AVAILABLE"] != "True" {
			t.Errorf("a built-in APIService is not Local and available: %v", r)
		}
	}
	if got := k.mustKubectl(t, "get", "apiservice", "v2.autoscaling", "-o",
		"jsonpath={.spec.groupPriorityMinimum}/{.spec.versionPriority} {.status.conditions[0].reason}: {.status.conditions[0].message}"); got != "17500/30 Local: Local APIServices are always available" {
		t.Errorf("v2.autoscaling: %q", got)
	}

	// Kubernetes' validation, in its words.
	bad := strings.Replace(metricsAPIService, "name: v1beta1.metrics.k8s.io", "name: metrics", 1)
	if errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "bad.yaml", bad)); !strings.Contains(errOut, "metadata.name: Invalid value: \"metrics\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\"") {
		t.Errorf("a misnamed APIService: %s", errOut)
	}

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "metrics.yaml", metricsAPIService))
	testserver.EventuallyWithin(t, 30*time.Second, "the metrics APIService is False (ServiceNotFound)", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "apiservice", "v1beta1.metrics.k8s.io")
		if code != 0 {
			return false, errOut
		}
		row := parseTable(t, out).rows[0]
		return row["SERVICE"] == "kube-system/metrics-server" && row["AVAILABLE"] == "False (ServiceNotFound)", out
	})
	k.mustKubectl(t, "create", "service", "clusterip", "metrics-server", "-n", "kube-system", "--tcp=443:4443")
	testserver.EventuallyWithin(t, 30*time.Second, "with its Service, the discovery check fails", func() (bool, string) {
		out := k.mustKubectl(t, "get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "jsonpath={.status.conditions[0].reason}: {.status.conditions[0].message}")
		return out == "FailedDiscoveryCheck: failing or missing response from https://metrics-server.kube-system.svc:443/apis/metrics.k8s.io/v1beta1: "+
			`no endpoints available for service "metrics-server"`, out
	})

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "gadgets.yaml", gadgetsCRD))
	testserver.EventuallyWithin(t, 30*time.Second, "v1.example.com is registered", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "apiservice", "v1.example.com", "-o", "jsonpath={.spec.groupPriorityMinimum} {.metadata.labels}")
		return code == 0 && out == `1000 {"kube-aggregator.kubernetes.io/automanaged":"true"}`, out + errOut
	})
	k.mustKubectl(t, "delete", "crd", "gadgets.example.com")
	testserver.EventuallyWithin(t, 30*time.Second, "v1.example.com is gone with its definition", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "apiservice", "v1.example.com")
		return code != 0 && strings.Contains(errOut, "NotFound"), out + errOut
	})
}
