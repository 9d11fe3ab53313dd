package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// A namespace's ResourceQuota with the real kubectl: `kubectl create
// quota`, the controller filling in its status, the admission plugin
// charging a pod and refusing the ones that do not fit with Kubernetes'
// messages, the usage going down when a pod is deleted, and a
// ReplicationController that the quota keeps short of pods saying so in
// its ReplicaFailure condition. No node runs: pods count against a quota
// from their creation, scheduled or not.
const quotaPods = `apiVersion: v1
kind: Pod
metadata:
  name: fits
spec:
  containers:
  - name: web
    image: nginx:1.25
    resources: {requests: {cpu: 500m}, limits: {cpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: unlimited
spec:
  containers:
  - name: web
    image: nginx:1.25
    resources: {requests: {cpu: 100m}}
---
apiVersion: v1
kind: Pod
metadata:
  name: too-big
spec:
  containers:
  - name: web
    image: nginx:1.25
    resources: {requests: {cpu: 600m}, limits: {cpu: 600m}}
`

const quotaRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: web
  namespace: small
spec:
  replicas: 3
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
`

func TestResourceQuotaWithKubectl(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)

	k.mustKubectl(t, "create", "quota", "compute", "--hard=pods=2,requests.cpu=1,limits.cpu=2")
	// quotaRow is `kubectl get quota compute`: REQUEST and LIMIT.
	quotaRow := func() (string, string) {
		row := parseTable(t, k.mustKubectl(t, "get", "quota", "compute")).row(t, "NAME", "compute")
		return row["REQUEST"], row["LIMIT"]
	}
	testserver.EventuallyWithin(t, 30*time.Second, "the controller counts the new quota", func() (bool, string) {
		req, lim := quotaRow()
		return req == "pods: 0/2, requests.cpu: 0/1" && lim == "limits.cpu: 0/2", req + " | " + lim
	})
	out := k.mustKubectl(t, "get", "quota")
	if h := parseTable(t, out).header; strings.Join(h, ",") != "NAME,REQUEST,LIMIT,AGE" {
		t.Errorf("kubectl get quota columns %v, want Kubernetes' NAME REQUEST LIMIT AGE:\n%s", h, out)
	}

	t.Run("a quota on an unknown resource is refused", func(t *testing.T) {
		errOut := k.mustFail(t, "create", "quota", "bad", "--hard=gpus=1")
		if want := `spec.hard[gpus]: Invalid value: "gpus": must be a standard resource for quota`; !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
	})

	_, errOut, _ := k.kubectl(t, "apply", "-f", k.manifest(t, "pods.yaml", quotaPods))
	t.Run("a pod that does not state a limited resource is refused", func(t *testing.T) {
		want := `pods "unlimited" is forbidden: failed quota: compute: must specify limits.cpu for: web`
		if !strings.Contains(errOut, want) {
			t.Errorf("kubectl apply stderr:\n%s\nwant %s", errOut, want)
		}
	})
	t.Run("a pod over the quota is refused with Kubernetes' message", func(t *testing.T) {
		want := `pods "too-big" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1`
		if !strings.Contains(errOut, want) {
			t.Errorf("kubectl apply stderr:\n%s\nwant %s", errOut, want)
		}
	})
	t.Run("kubectl describe quota shows what the pod that fits uses", func(t *testing.T) {
		out := k.mustKubectl(t, "describe", "quota", "compute")
		for _, line := range []string{`limits.cpu\s+1\s+2`, `pods\s+1\s+2`, `requests.cpu\s+500m\s+1`} {
			if !regexp.MustCompile(`(?m)^` + line + `\s*$`).MatchString(out) {
				t.Errorf("no line %q in\n%s", line, out)
			}
		}
	})
	t.Run("deleting the pod gives its usage back", func(t *testing.T) {
		k.mustKubectl(t, "delete", "pod", "fits")
		testserver.EventuallyWithin(t, 30*time.Second, "the quota is back to 0", func() (bool, string) {
			req, lim := quotaRow()
			return req == "pods: 0/2, requests.cpu: 0/1" && lim == "limits.cpu: 0/2", req + " | " + lim
		})
	})

	t.Run("a ReplicationController held back by the quota says so, and stops once it fits", func(t *testing.T) {
		k.mustKubectl(t, "create", "namespace", "small")
		k.mustKubectl(t, "create", "quota", "pods", "-n", "small", "--hard=pods=2")
		testserver.EventuallyWithin(t, 30*time.Second, "the quota is counted", func() (bool, string) {
			out := k.mustKubectl(t, "get", "quota", "pods", "-n", "small", "-o", "jsonpath={.status.used.pods}")
			return out == "0", out
		})
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "rc.yaml", quotaRC))
		failure := func() string {
			return k.mustKubectl(t, "get", "rc", "web", "-n", "small", "-o",
				`jsonpath={.status.conditions[?(@.type=="ReplicaFailure")].reason}: {.status.conditions[?(@.type=="ReplicaFailure")].message}`)
		}
		testserver.EventuallyWithin(t, 30*time.Second, "ReplicaFailure=FailedCreate", func() (bool, string) {
			got := failure()
			return strings.HasPrefix(got, "FailedCreate: pods \"web-") &&
				strings.HasSuffix(got, `" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2`), got
		})
		k.mustKubectl(t, "scale", "rc", "web", "-n", "small", "--replicas=2")
		testserver.EventuallyWithin(t, 30*time.Second, "the condition is gone", func() (bool, string) {
			got := failure()
			return got == ": ", got
		})
	})
}
