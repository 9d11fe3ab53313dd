package e2e

import (
	"strings"
	"testing"
)

// A namespace's LimitRange with the real kubectl: `kubectl get limits`
// and `kubectl describe limitrange` as on a real cluster, a range whose
// default exceeds its max refused with Kubernetes' message, and the
// LimitRanger admission giving a pod that asks for nothing the range's
// defaults, and refusing one above its max. No node is needed: admission
// happens in the API server.
const limitRangeManifest = `apiVersion: v1
kind: LimitRange
metadata:
  name: cpu-mem
spec:
  limits:
  - type: Container
    min: {cpu: 50m, memory: 64Mi}
    max: {cpu: 500m, memory: 512Mi}
    defaultRequest: {cpu: 100m, memory: 128Mi}
`

const badLimitRange = `apiVersion: v1
kind: LimitRange
metadata:
  name: bad
spec:
  limits:
  - type: Container
    max: {cpu: 500m}
    default: {cpu: 600m}
    defaultRequest: {cpu: 100m}
`

func TestLimitRangeDefaultsAndBoundsPods(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "limits.yaml", limitRangeManifest))
	out := k.mustKubectl(t, "get", "limits")
	if tab := parseTable(t, out); strings.Join(tab.header, ",") != "NAME,CREATED AT" || tab.rows[0]["NAME"] != "cpu-mem" ||
		!strings.HasSuffix(tab.rows[0]["CREATED AT"], "Z") {
		t.Fatalf("kubectl get limits:\n%s", out)
	}
	// The default limit is the max (Kubernetes' defaulting); describe
	// shows each resource's min, max, default request and limit.
	described := k.mustKubectl(t, "describe", "limitrange", "cpu-mem")
	t.Logf("kubectl describe limitrange cpu-mem\n%s", described)
	for _, want := range []string{"Container     cpu       50m   500m  100m             500m           -",
		"Container     memory    64Mi  512Mi  128Mi            512Mi          -"} {
		if !strings.Contains(strings.Join(strings.Fields(described), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("describe lacks %q", want)
		}
	}

	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "bad.yaml", badLimitRange))
	if !strings.Contains(errOut, `spec.limits[0].default[cpu]: Invalid value: "500m": default value 600m is greater than max value 500m`) {
		t.Errorf("an invalid range: %s", errOut)
	}

	k.mustKubectl(t, "run", "web", "--image", "nginx:1.27")
	res := k.mustKubectl(t, "get", "pod", "web", "-o",
		`jsonpath={.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.limits.memory}|{.metadata.annotations.kubernetes\.io/limit-ranger}`)
	if want := "100m 512Mi|LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web"; res != want {
		t.Errorf("the pod got %q, want %q", res, want)
	}

	errOut = k.mustFail(t, "run", "big", "--image", "nginx:1.27", "--overrides",
		`{"spec":{"containers":[{"name":"big","image":"nginx:1.27","resources":{"limits":{"cpu":"800m"}}}]}}`)
	if !strings.Contains(errOut, `pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 800m`) {
		t.Errorf("a pod above max: %s", errOut)
	}
}

// A PodTemplate with the real kubectl: `kubectl get podtemplates` prints
// kube-apiserver's columns, a template without containers is refused, and
// changing the template (not the labels) counts a generation.
const podTemplateManifest = `apiVersion: v1
kind: PodTemplate
metadata:
  name: web
template:
  metadata:
    labels: {app: web}
  spec:
    containers:
    - name: nginx
      image: nginx:1.27
`

func TestPodTemplatesAreStoredPrintedAndValidated(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "template.yaml", podTemplateManifest))
	out := k.mustKubectl(t, "get", "podtemplates")
	tab := parseTable(t, out)
	if row := tab.row(t, "NAME", "web"); strings.Join(tab.header, ",") != "NAME,CONTAINERS,IMAGES,POD LABELS" ||
		row["CONTAINERS"] != "nginx" || row["IMAGES"] != "nginx:1.27" || row["POD LABELS"] != "app=web" {
		t.Fatalf("kubectl get podtemplates:\n%s", out)
	}

	k.mustKubectl(t, "label", "podtemplate", "web", "tier=front")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "template.yaml", strings.Replace(podTemplateManifest, "nginx:1.27", "nginx:1.28", 1)))
	if gen := k.mustKubectl(t, "get", "podtemplate", "web", "-o", "jsonpath={.metadata.generation}"); gen != "2" {
		t.Errorf("generation %s after a label and an image change, want 2", gen)
	}

	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "empty.yaml",
		"apiVersion: v1\nkind: PodTemplate\nmetadata: {name: empty}\ntemplate:\n  spec: {containers: []}\n"))
	if !strings.Contains(errOut, "template.spec.containers: Required value") {
		t.Errorf("a template without containers: %s", errOut)
	}
}
