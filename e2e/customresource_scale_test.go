package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkube/mkube/internal/testserver"
)

// Kubernetes' CronTab, with a scale subresource.
const crontabsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
        scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.labelSelector}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                cronSpec: {type: string}
                replicas: {type: integer}
            status:
              type: object
              properties:
                replicas: {type: integer}
                labelSelector: {type: string}
`

// The scale subresource of a custom resource, with the real kubectl:
// kubectl scale finds it through discovery and writes spec.replicas
// only, kubectl get --subresource=scale shows the Scale, a stale
// precondition is refused, and RBAC judges
// crontabs/scale on its own.
func TestKubectlScalesACustomResource(t *testing.T) {
	t.Parallel()
	c := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
	c.startAPIServer(filepath.Join(t.TempDir(), "etcd"))
	c.waitReady()
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
	})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "crontabs.yaml", crontabsCRD))
	k.mustKubectl(t, "wait", "--for", "condition=Established", "crd/crontabs.stable.example.com", "--timeout", "20s")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "x.yaml", "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: x}\nspec: {cronSpec: '* * * * */5', replicas: 1}\n"))
	k.mustKubectl(t, "patch", "crontab", "x", "--subresource", "status", "--type", "merge", "-p", `{"status":{"replicas":1,"labelSelector":"app=cron"}}`)

	if out := k.mustKubectl(t, "scale", "--replicas=3", "crontab/x"); strings.TrimSpace(out) != "crontab.stable.example.com/x scaled" {
		t.Errorf("kubectl scale: %q", out)
	}
	if got := k.mustKubectl(t, "get", "crontab", "x", "-o", "jsonpath={.spec.replicas} {.spec.cronSpec} {.status.replicas} {.metadata.generation}"); got != "3 * * * * */5 1 2" {
		t.Errorf("after kubectl scale: replicas, cronSpec, status replicas, generation %q, want \"3 * * * * */5 1 2\"", got)
	}
	table := parseTable(t, k.mustKubectl(t, "get", "crontab", "x", "--subresource=scale"))
	if row := table.row(t, "NAME", "x"); row["DESIRED"] != "3" || row["AVAILABLE"] != "1" {
		t.Errorf("kubectl get --subresource=scale: %v, want desired 3, available 1", row)
	}
	if got := k.mustKubectl(t, "get", "crontab", "x", "--subresource=scale", "-o", "jsonpath={.apiVersion} {.kind} {.spec.replicas} {.status.selector}"); got != "autoscaling/v1 Scale 3 app=cron" {
		t.Errorf("the Scale: %q", got)
	}

	if errOut := k.mustFail(t, "patch", "crontab", "x", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":-1}}`); !strings.Contains(errOut,
		`The CronTab "x" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`) {
		t.Errorf("negative replicas: %s", errOut)
	}

	// Preconditions: the current replicas (kubectl GETs the scale, then
	// PUTs it) and a stale resourceVersion.
	k.mustKubectl(t, "scale", "--current-replicas=3", "--replicas=5", "crontab/x")
	if errOut := k.mustFail(t, "scale", "--current-replicas=3", "--replicas=1", "crontab/x"); !strings.Contains(errOut, "Expected replicas to be 3, was 5") {
		t.Errorf("a wrong --current-replicas: %s", errOut)
	}
	// kubectl checks --resource-version against the Scale it read.
	if errOut := k.mustFail(t, "scale", "--resource-version=1", "--replicas=1", "crontab/x"); !strings.Contains(errOut, "Expected resource version to be 1, was ") {
		t.Errorf("a stale --resource-version: %s", errOut)
	}

	// RBAC: jane may read and change CronTabs' scale, not the CronTabs.
	k.mustKubectl(t, "create", "role", "crontab-scaler", "--verb=get,patch,update", "--resource=crontabs.stable.example.com/scale")
	k.mustKubectl(t, "create", "rolebinding", "jane-scales", "--role=crontab-scaler", "--user=jane")
	testserver.Eventually(t, "jane may scale crontabs", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "patch", "crontab", "x", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":2}}`, "--as", "jane")
		return code == 0, out + errOut
	})
	if got := k.mustKubectl(t, "get", "crontab", "x", "--subresource=scale", "--as", "jane", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("jane reads the scale: spec.replicas %s, want 2", got)
	}
	if errOut := k.mustFail(t, "get", "crontab", "x", "--as", "jane"); !strings.Contains(errOut,
		`crontabs.stable.example.com "x" is forbidden: User "jane" cannot get resource "crontabs" in API group "stable.example.com" in the namespace "default"`) {
		t.Errorf("jane reads a CronTab: %s", errOut)
	}
}
