package e2e

import (
	"strings"
	"testing"
)

// Dynamic Resource Allocation's kinds (resource.k8s.io/v1) with the real
// kubectl: what a GPU driver publishes (a ResourceSlice of its node's
// devices) and its class, a claim and a template users write, the status
// the scheduler would write, and a DeviceTaintRule.
const draKinds = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node01-gpu.example.com
spec:
  driver: gpu.example.com
  nodeName: node01
  pool: {name: node01, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
    capacity:
      memory: {value: 40Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: big-gpu
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: gpu-0-maintenance
spec:
  deviceSelector: {driver: gpu.example.com, pool: node01, device: gpu-0}
  taint: {key: example.com/maintenance, effect: NoSchedule}
`

// A selector with a typo, which kube-apiserver's CEL compiler refuses.
const claimWithATypo = `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: typo
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.atributes["gpu.example.com"].model == "A100"'}
`

func TestDynamicResourceAllocationKindsWithKubectl(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "--server-side", "-f", k.manifest(t, "dra.yaml", draKinds))

	if r := parseTable(t, k.mustKubectl(t, "get", "resourceclaims")).row(t, "NAME", "big-gpu"); r["STATE"] != "pending" {
		t.Errorf("a new claim: %v", r)
	}
	// What the scheduler's DynamicResources plugin writes once it has
	// picked a device, and then the pod it reserves the claim for.
	k.mustKubectl(t, "patch", "resourceclaim", "big-gpu", "--subresource", "status", "--type", "merge", "-p",
		`{"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node01","device":"gpu-0"}]}}}}`)
	k.mustKubectl(t, "patch", "resourceclaim", "big-gpu", "--subresource", "status", "--type", "merge", "-p",
		`{"status":{"reservedFor":[{"resource":"pods","name":"trainer","uid":"0b5f1c1e-3f0e-4f5e-9d55-8c4a1c2b7e01"}]}}`)
	if r := parseTable(t, k.mustKubectl(t, "get", "resourceclaims")).row(t, "NAME", "big-gpu"); r["STATE"] != "allocated,reserved" {
		t.Errorf("an allocated claim in use: %v", r)
	}

	slices := parseTable(t, k.mustKubectl(t, "get", "resourceslices", "--field-selector", "spec.nodeName=node01"))
	if got := strings.Join(slices.header, " "); got != "NAME NODE DRIVER POOL AGE" {
		t.Fatalf("kubectl get resourceslices columns: %s", got)
	}
	if r := slices.row(t, "NAME", "node01-gpu.example.com"); r["DRIVER"] != "gpu.example.com" || r["POOL"] != "node01" {
		t.Errorf("kubectl get resourceslices: %v", r)
	}
	if out := k.mustKubectl(t, "get", "resourceclaimtemplate", "one-gpu", "-o", "jsonpath={.spec.spec.devices.requests[0].exactly.allocationMode}/{.spec.spec.devices.requests[0].exactly.count}"); out != "ExactCount/1" {
		t.Errorf("a template's request defaults to exactly one device: %s", out)
	}
	rule := parseTable(t, k.mustKubectl(t, "get", "devicetaintrules")).row(t, "NAME", "gpu-0-maintenance")
	if rule["KEY"] != "example.com/maintenance" || rule["EFFECT"] != "NoSchedule" || rule["TIMEADDED"] == "<unset>" {
		t.Errorf("kubectl get devicetaintrules: %v", rule)
	}
	if out := strings.TrimSpace(k.mustKubectl(t, "get", "deviceclasses", "-o", "name")); out != "deviceclass.resource.k8s.io/gpu.example.com" {
		t.Errorf("kubectl get deviceclasses: %s", out)
	}

	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "typo.yaml", claimWithATypo))
	if !strings.Contains(errOut, `The ResourceClaim "typo" is invalid: spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value:`) ||
		!strings.Contains(errOut, "undefined field 'atributes'") {
		t.Errorf("a selector with a typo: %s", errOut)
	}
	errOut = k.mustFail(t, "patch", "resourceclaim", "big-gpu", "--type", "merge", "-p",
		`{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other.example.com"}}]}}}`)
	if !strings.Contains(errOut, "spec: Invalid value:") || !strings.Contains(errOut, "field is immutable") {
		t.Errorf("changing a claim's spec: %s", errOut)
	}
}
