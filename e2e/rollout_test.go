package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// The Deployment rollout strategies, driven with the real kubectl against
// the real binaries: fake kubelets "pull" each image for 300ms, so a
// RollingUpdate visibly moves a few pods at a time, as
// `kubectl rollout status` and the ScalingReplicaSet events show.

// rollDeployment has 4 replicas and Kubernetes' default strategy: a
// RollingUpdate with maxSurge and maxUnavailable 25%, which on 4 replicas
// is 1 pod above and 1 pod below 4.
const rollDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: roll
spec:
  replicas: 4
  selector:
    matchLabels:
      app: roll
  template:
    metadata:
      labels:
        app: roll
    spec:
      containers:
      - name: c
        image: nginx:1.25
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
`

// rolloutStatusLine is every line `kubectl rollout status` may print for
// a Deployment (kubectl's DeploymentStatusViewer), for deployment "roll".
var rolloutStatusLine = regexp.MustCompile(`^(Waiting for deployment spec update to be observed\.\.\.` +
	`|Waiting for deployment "roll" rollout to finish: (\d+ out of \d+ new replicas have been updated|\d+ old replicas are pending termination|\d+ of \d+ updated replicas are available)\.\.\.` +
	`|deployment "roll" successfully rolled out)$`)

func TestRollout(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02")
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get nodes shows 2 Ready nodes", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes")
		return code == 0 && sameStrings(parseTable(t, out).column("STATUS"), []string{"Ready", "Ready"}), out + errOut
	})

	// rolloutStatus waits with `kubectl rollout status` and checks that
	// it speaks as kubectl does against Kubernetes and ends rolled out.
	rolloutStatus := func(t *testing.T) string {
		t.Helper()
		out := k.mustKubectl(t, "rollout", "status", "deployment/roll", "--timeout=60s")
		t.Logf("kubectl rollout status:\n%s", out)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines {
			if !rolloutStatusLine.MatchString(l) {
				t.Errorf("rollout status printed %q, not one of kubectl's Deployment lines", l)
			}
		}
		if last := lines[len(lines)-1]; last != `deployment "roll" successfully rolled out` {
			t.Fatalf("rollout status ended with %q", last)
		}
		return out
	}
	// replicaSets maps each image to the name and spec.replicas of the
	// ReplicaSet running it.
	replicaSets := func(t *testing.T) map[string][2]string {
		t.Helper()
		out := k.mustKubectl(t, "get", "rs", "-l", "app=roll", "-o",
			`jsonpath={range .items[*]}{.spec.template.spec.containers[0].image} {.metadata.name} {.spec.replicas}{"\n"}{end}`)
		m := map[string][2]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) == 3 {
				m[f[0]] = [2]string{f[1], f[2]}
			}
		}
		return m
	}
	podsRun := func(t *testing.T, image string) {
		t.Helper()
		testserver.EventuallyWithin(t, 60*time.Second, "4 roll pods of "+image+" are Running", func() (bool, string) {
			pods, ok := c.running("app%3Droll", 4)
			var images []string
			for _, p := range pods {
				ok = ok && p.Spec.Containers[0].Image == image
				images = append(images, p.Spec.Containers[0].Image)
			}
			return ok, podStates(pods) + fmt.Sprintf("\nimages %v", images)
		})
	}

	if out := k.mustKubectl(t, "apply", "-f", k.manifest(t, "roll.yaml", rollDeployment)); out != "deployment.apps/roll created\n" {
		t.Fatalf("apply: %q", out)
	}
	rolloutStatus(t)
	podsRun(t, "nginx:1.25")

	t.Run("kubectl set image rolls the new template out a few pods at a time", func(t *testing.T) {
		describe := k.mustKubectl(t, "describe", "deployment", "roll")
		if !strings.Contains(describe, "RollingUpdateStrategy:  25% max unavailable, 25% max surge\n") {
			t.Errorf("describe does not show the default strategy:\n%s", describe)
		}
		old := replicaSets(t)["nginx:1.25"][0]
		if out := k.mustKubectl(t, "set", "image", "deployment/roll", "c=nginx:1.26"); out != "deployment.apps/roll image updated\n" {
			t.Errorf("set image: %q", out)
		}
		rolloutStatus(t)
		podsRun(t, "nginx:1.26")
		rsets := replicaSets(t)
		cur := rsets["nginx:1.26"][0]
		if rsets["nginx:1.26"][1] != "4" || rsets["nginx:1.25"][1] != "0" {
			t.Errorf("after the rollout the ReplicaSets are %v, want nginx:1.26 at 4 and nginx:1.25 at 0", rsets)
		}
		// The events, in order, tell each step. Each time the new
		// ReplicaSet grows by at most maxSurge + maxUnavailable = 2: after
		// an old one shrank to keep 3 available, there is room for 5.
		var up, down [][2]int
		testserver.EventuallyWithin(t, 30*time.Second, "the ScalingReplicaSet events bring "+cur+" to 4 and "+old+" to 0", func() (bool, string) {
			up, down = scalingSteps(t, k, cur, "up"), scalingSteps(t, k, old, "down")
			return len(up) > 0 && up[len(up)-1][1] == 4 && len(down) > 0 && down[len(down)-1][1] == 0, fmt.Sprintf("up %v, down %v", up, down)
		})
		t.Logf("%s scaled up %v, %s scaled down %v", cur, up, old, down)
		if len(up) < 2 {
			t.Errorf("the new ReplicaSet was scaled up in %d step(s) %v: a rolling update of 4 with 25%% surge takes several", len(up), up)
		}
		for i, s := range up {
			if (i == 0 && s[0] != 0) || (i > 0 && s[0] != up[i-1][1]) || s[1]-s[0] > 2 {
				t.Errorf("scale-up steps %v: each step should start where the last ended and add at most 2 pods", up)
				break
			}
		}
	})

	t.Run("a paused Deployment takes a new template without rolling it out, and resumes", func(t *testing.T) {
		if out := k.mustKubectl(t, "rollout", "pause", "deployment/roll"); out != "deployment.apps/roll paused\n" {
			t.Errorf("rollout pause: %q", out)
		}
		progressing := `jsonpath={.status.conditions[?(@.type=="Progressing")].reason}`
		testserver.EventuallyWithin(t, 30*time.Second, "Progressing says DeploymentPaused", func() (bool, string) {
			reason := k.mustKubectl(t, "get", "deployment", "roll", "-o", progressing)
			return reason == "DeploymentPaused", "Progressing reason " + reason
		})
		k.mustKubectl(t, "set", "image", "deployment/roll", "c=nginx:1.27")
		testserver.EventuallyWithin(t, 30*time.Second, "the controller has seen the new template", func() (bool, string) {
			out := k.mustKubectl(t, "get", "deployment", "roll", "-o", "jsonpath={.metadata.generation} {.status.observedGeneration}")
			f := strings.Fields(out)
			return len(f) == 2 && f[0] == f[1], "generation observedGeneration = " + out
		})
		// It has seen it and did nothing with it: no ReplicaSet for it,
		// the pods still the old ones, and nothing up to date.
		if rs, ok := replicaSets(t)["nginx:1.27"]; ok && rs[1] != "0" {
			t.Errorf("while paused, ReplicaSet %s of the new template was scaled to %s", rs[0], rs[1])
		}
		podsRun(t, "nginx:1.26")
		out := k.mustKubectl(t, "rollout", "status", "deployment/roll", "--watch=false")
		if want := "Waiting for deployment \"roll\" rollout to finish: 0 out of 4 new replicas have been updated...\n"; out != want {
			t.Errorf("rollout status --watch=false while paused: %q, want %q", out, want)
		}
		if got := k.mustKubectl(t, "get", "deployment", "roll", "-o", progressing); got != "DeploymentPaused" {
			t.Errorf("Progressing reason while paused: %q", got)
		}

		if out := k.mustKubectl(t, "rollout", "resume", "deployment/roll"); out != "deployment.apps/roll resumed\n" {
			t.Errorf("rollout resume: %q", out)
		}
		rolloutStatus(t)
		podsRun(t, "nginx:1.27")
		if got := k.mustKubectl(t, "get", "deployment", "roll", "-o", progressing); got != "NewReplicaSetAvailable" {
			t.Errorf("Progressing reason after the rollout: %q", got)
		}
		if up := scalingSteps(t, k, replicaSets(t)["nginx:1.27"][0], "up"); len(up) < 2 {
			t.Errorf("the resumed rollout scaled the new ReplicaSet up in %v: want several steps", up)
		}
		history := k.mustKubectl(t, "rollout", "history", "deployment/roll")
		var revs []string
		for _, l := range strings.Split(history, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] != "REVISION" && f[0] != "deployment.apps/roll" {
				revs = append(revs, f[0])
			}
		}
		if strings.Join(revs, " ") != "1 2 3" {
			t.Errorf("rollout history revisions %q, want 1 2 3:\n%s", revs, history)
		}
	})
}

// scalingSteps reads, in the order they happened, the "Scaled <dir>
// replica set <rs> from A to B" events of the Deployment roll, as [A, B].
func scalingSteps(t *testing.T, k *kubectlRunner, rs, dir string) [][2]int {
	t.Helper()
	out := k.mustKubectl(t, "get", "events", "--field-selector", "reason=ScalingReplicaSet,involvedObject.name=roll",
		"--sort-by", ".metadata.name", "-o", `jsonpath={range .items[*]}{.message}{"\n"}{end}`)
	msg := regexp.MustCompile(fmt.Sprintf(`^Scaled %s replica set %s from (\d+) to (\d+)$`, dir, regexp.QuoteMeta(rs)))
	var steps [][2]int
	for _, l := range strings.Split(out, "\n") {
		if m := msg.FindStringSubmatch(l); m != nil {
			from, _ := strconv.Atoi(m[1])
			to, _ := strconv.Atoi(m[2])
			steps = append(steps, [2]int{from, to})
		}
	}
	return steps
}
