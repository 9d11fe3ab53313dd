package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// cronTabHPA autoscales the CronTab x through its scale subresource.
const cronTabHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: x
spec:
  scaleTargetRef: {apiVersion: stable.example.com/v1, kind: CronTab, name: x}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
`

// The HPA controller on a custom resource, as on any kind with a scale
// subresource: it finds CronTabs' resource by discovery, reads the
// CronTab's Scale (spec.replicas, status.replicas and the selector at the
// definition's paths, served by the API server) and writes spec.replicas
// through it. No controller runs for CronTabs: the test plays it (the
// CronTab's pods, busy loops, and its status). The HPA controller runs
// as its own service account, which may update crontabs/scale but not
// crontabs: the writes can only have gone through the subresource.
func TestHPAScalesACustomResourceThroughItsScaleSubresource(t *testing.T) {
	t.Parallel()
	_, k := startClusterWithMetricsServer(t, "--horizontal-pod-autoscaler-sync-period", "1s", "--horizontal-pod-autoscaler-downscale-stabilization", "5s")
	t.Cleanup(func() {
		if t.Failed() {
			hpa, _, _ := k.kubectl(t, "describe", "hpa", "x")
			t.Logf("kubectl describe hpa x:\n%s", hpa)
		}
	})
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "crontabs.yaml", crontabsCRD))
	k.mustKubectl(t, "wait", "--for", "condition=Established", "crd/crontabs.stable.example.com", "--timeout", "20s")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "x.yaml", "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: x}\nspec: {cronSpec: '* * * * */5', replicas: 1}\n"))
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "hpa.yaml", cronTabHPA))

	// Before the CronTab reports a selector, its Scale has none.
	testserver.EventuallyWithin(t, 60*time.Second, "the HPA reads the CronTab's scale without a selector", func() (bool, string) {
		out := k.mustKubectl(t, "describe", "hpa", "x")
		return regexp.MustCompile(`AbleToScale\s+True\s+SucceededGetScale\s+the HPA controller was able to get the target's current scale`).MatchString(out) &&
			regexp.MustCompile(`ScalingActive\s+False\s+InvalidSelector\s+the HPA target's scale is missing a selector`).MatchString(out), out
	})

	crontab := cronTabController{k: k, uid: k.mustKubectl(t, "get", "crontab", "x", "-o", "jsonpath={.metadata.uid}")}
	var seen []string // spec.replicas as the CronTab's controller saw it
	reaches := func(want string) func() (bool, string) {
		return func() (bool, string) {
			spec, status := crontab.reconcile(t)
			if len(seen) == 0 || seen[len(seen)-1] != spec {
				seen = append(seen, spec)
			}
			return spec == want && status == want, "spec.replicas " + spec + ", status.replicas " + status
		}
	}
	testserver.EventuallyWithin(t, 150*time.Second, "the HPA scales the CronTab to maxReplicas", reaches("3"))
	t.Logf("the CronTab's spec.replicas went %v", seen)
	// The HPA's status counts the replicas as of its next sync.
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get hpa x shows the CronTab at 3 replicas", func() (bool, string) {
		out := k.mustKubectl(t, "get", "hpa", "x")
		row := parseTable(t, out).rows[0]
		m := regexp.MustCompile(`^cpu: (\d+)%/50%$`).FindStringSubmatch(row["TARGETS"])
		if row["REFERENCE"] != "CronTab/x" || m == nil || row["REPLICAS"] != "3" {
			return false, out
		}
		if n, _ := strconv.Atoi(m[1]); n <= 50 {
			t.Errorf("kubectl get hpa x: cpu at %d%%, want above the target: busy loops\n%s", n, out)
		}
		return true, ""
	})
	scale := parseTable(t, k.mustKubectl(t, "get", "crontab", "x", "--subresource=scale")).row(t, "NAME", "x")
	if scale["DESIRED"] != "3" || scale["AVAILABLE"] != "3" {
		t.Errorf("kubectl get crontab x --subresource=scale: %v, want 3 desired, 3 available", scale)
	}
	if got := k.mustKubectl(t, "get", "crontab", "x", "-o", "jsonpath={.spec.cronSpec}"); got != "* * * * */5" {
		t.Errorf("the CronTab's cronSpec is %q after the rescale, want it untouched", got)
	}
	out := k.mustKubectl(t, "describe", "hpa", "x")
	if !regexp.MustCompile(`Normal\s+SuccessfulRescale\s+.*horizontal-pod-autoscaler\s+New size: 3; reason: cpu resource utilization \(percentage of request\) above target`).MatchString(out) {
		t.Errorf("kubectl describe hpa x has no rescale to 3:\n%s", out)
	}
	t.Logf("kubectl describe hpa x at maxReplicas:\n%s", out)

	// What the HPA controller's account may do to CronTabs.
	const hpaAccount = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"update", "crontabs.stable.example.com", "--subresource=scale"}, "yes"},
		{[]string{"update", "crontabs.stable.example.com"}, "no"},
		{[]string{"patch", "crontabs.stable.example.com"}, "no"},
	} {
		got, _, _ := k.kubectl(t, append(append([]string{"auth", "can-i"}, tc.args...), "--as", hpaAccount)...)
		if strings.TrimSpace(got) != tc.want {
			t.Errorf("kubectl auth can-i %s as the HPA controller: %q, want %s", strings.Join(tc.args, " "), got, tc.want)
		}
	}

	// A target the busy loops are far below: the HPA scales the CronTab
	// down, after the (shortened) downscale window.
	k.mustKubectl(t, "patch", "hpa", "x", "--type=json", "-p", `[{"op":"replace","path":"/spec/metrics/0/resource/target/averageUtilization","value":100000}]`)
	testserver.EventuallyWithin(t, 60*time.Second, "the HPA scales the CronTab down to minReplicas", reaches("1"))
	t.Logf("the CronTab's spec.replicas went %v", seen)
	if out := k.mustKubectl(t, "describe", "hpa", "x"); !strings.Contains(out, "New size: 1; reason: All metrics below target") {
		t.Errorf("kubectl describe hpa x has no rescale to 1:\n%s", out)
	}
}

// cronTabController is what a CronTab's controller would do, done by the
// test: keep a pod per replica its spec asks for (x-0, x-1, ...: busy
// loops, owned by the CronTab), and report in its status how many it
// has and the selector that finds them, where the definition's
// subresources.scale points the Scale.
type cronTabController struct {
	k   *kubectlRunner
	uid string
}

// reconcile does it once and returns spec.replicas and status.replicas.
func (c cronTabController) reconcile(t *testing.T) (spec, status string) {
	t.Helper()
	spec = c.k.mustKubectl(t, "get", "crontab", "x", "-o", "jsonpath={.spec.replicas}")
	want, err := strconv.Atoi(spec)
	if err != nil {
		t.Fatalf("the CronTab's spec.replicas %q: %v", spec, err)
	}
	have := strings.Fields(c.k.mustKubectl(t, "get", "pods", "-l", "crontab=x", "-o", "jsonpath={.items[*].metadata.name}"))
	var create strings.Builder
	for i := range want {
		if name := fmt.Sprintf("x-%d", i); !slices.Contains(have, name) {
			fmt.Fprintf(&create, cronTabPod, name, c.uid)
		}
	}
	if create.Len() > 0 {
		c.k.mustKubectl(t, "apply", "-f", c.k.manifest(t, "pods.yaml", create.String()))
	}
	for _, name := range have {
		if i, _ := strconv.Atoi(strings.TrimPrefix(name, "x-")); i >= want {
			c.k.mustKubectl(t, "delete", "pod", name, "--wait=false", "--ignore-not-found")
		}
	}
	status = strconv.Itoa(want)
	c.k.mustKubectl(t, "patch", "crontab", "x", "--subresource=status", "--type=merge", "-p",
		`{"status":{"replicas":`+status+`,"labelSelector":"crontab=x"}}`)
	return spec, status
}

// cronTabPod is a pod of the CronTab x (name, the CronTab's uid): a busy
// loop, a core against its 100m request.
const cronTabPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {crontab: x}
  ownerReferences:
  - {apiVersion: stable.example.com/v1, kind: CronTab, name: x, uid: %s, controller: true}
spec:
  containers:
  - name: job
    image: busybox
    command: [sh, -c, "while true; do :; done"]
    resources:
      requests: {cpu: 100m}
---
`
