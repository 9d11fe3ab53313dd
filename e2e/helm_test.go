package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Seed 003 §十四 as a learner types it, with the real Helm 4 and Helm 3,
// against a cluster and mkube's chart repository (`mkube serve-charts`,
// standing in for the seed's mirrors of the old stable repository, which
// are on the internet): the repository commands, then a release's whole
// life, each step checked in the objects the cluster holds.
func TestHelm4Seed(t *testing.T) { t.Parallel(); helmSeed(t, "helm") }
func TestHelm3Seed(t *testing.T) { t.Parallel(); helmSeed(t, "helm3") }

func helmSeed(t *testing.T, name string) {
	findHelm(t, name) // skips before a cluster starts
	c := startCluster(t, nil, "node01", "node02")
	k := newKubectl(t, c)
	h := newHelm(t, c, name)
	repo := startChartRepo(t, c)
	jsonpath := func(kind, obj, path string) string {
		return k.mustKubectl(t, "get", kind, obj, "-o", "jsonpath="+path)
	}

	// 4.1: repositories.
	wantLines(t, "repo add", h.must(t, "repo", "add", "stable", repo), `"stable" has been added to your repositories`)
	wantLines(t, "repo add", h.must(t, "repo", "add", "aliyun", repo), `"aliyun" has been added to your repositories`)
	wantLines(t, "repo update", h.must(t, "repo", "update"),
		`...Successfully got an update from the "stable" chart repository`, `...Successfully got an update from the "aliyun" chart repository`)
	wantLines(t, "repo list", h.must(t, "repo", "list"), "NAME URL", "stable "+repo, "aliyun "+repo)
	search := h.must(t, "search", "repo", "stable")
	for _, chart := range []string{"stable/guestbook 1.0.0 2.53", "stable/mysql 1.0.0 8.4.3", "stable/nginx 1.0.0 1.27.3"} {
		if !hasRowStarting(search, chart) {
			t.Errorf("search repo stable: no row %q in\n%s", chart, search)
		}
	}
	wantLines(t, "repo remove", h.must(t, "repo", "remove", "aliyun"), `"aliyun" has been removed from your repositories`)
	if list := h.must(t, "repo", "list"); strings.Contains(list, "aliyun") {
		t.Errorf("repo list after repo remove aliyun:\n%s", list)
	}

	// 5.1: find the chart, look at it, install it.
	if out := h.must(t, "search", "repo", "mysql"); !hasRowStarting(out, "stable/mysql 1.0.0 8.4.3") || strings.Contains(out, "stable/nginx") {
		t.Errorf("search repo mysql:\n%s", out)
	}
	wantLines(t, "show chart", h.must(t, "show", "chart", "stable/mysql"), "name: mysql", "version: 1.0.0", "appVersion: 8.4.3", "apiVersion: v2")
	wantLines(t, "show values", h.must(t, "show", "values", "stable/mysql"), `mysqlRootPassword: ""`, "  size: 8Gi")
	h.must(t, "pull", "stable/mysql", "--destination", h.dir)
	if _, err := os.Stat(filepath.Join(h.dir, "mysql-1.0.0.tgz")); err != nil {
		t.Errorf("helm pull stable/mysql: %v", err)
	}

	began := time.Now()
	install := h.must(t, "install", "mysql", "stable/mysql", "--wait", "--timeout", "5m")
	t.Logf("%s install mysql stable/mysql --wait: %v", name, time.Since(began).Round(100*time.Millisecond))
	wantLines(t, "install", install, "NAME: mysql", "NAMESPACE: default", "STATUS: deployed", "REVISION: 1", "NOTES:")
	// --wait returned: the release is ready now, not later.
	if ready := jsonpath("deployment", "mysql", "{.status.readyReplicas}"); ready != "1" {
		t.Errorf("install --wait returned with the Deployment's readyReplicas %q, want 1", ready)
	}
	if phase := jsonpath("pvc", "mysql", "{.status.phase}"); phase != "Bound" {
		t.Errorf("install --wait returned with the claim %s, want Bound", phase)
	}
	if pw := jsonpath("secret", "mysql", "{.data.mysql-root-password}"); pw == "" {
		t.Error("the Secret mysql has no mysql-root-password")
	}
	if port := jsonpath("service", "mysql", "{.spec.ports[0].port}"); port != "3306" {
		t.Errorf("Service mysql's port %q, want 3306", port)
	}
	wantLines(t, "list", h.must(t, "list"), "NAME NAMESPACE REVISION UPDATED STATUS CHART APP VERSION")
	if list := h.must(t, "list"); !hasRowMatching(list, "mysql", "default", "1", "deployed", "mysql-1.0.0", "8.4.3") {
		t.Errorf("helm list:\n%s", list)
	}
	wantLines(t, "status", h.must(t, "status", "mysql"), "NAME: mysql", "STATUS: deployed", "REVISION: 1")
	// Releases are Secrets of type helm.sh/release.v1, one per revision.
	if got := k.mustKubectl(t, "get", "secrets", "-l", "owner=helm,name=mysql", "-o", "jsonpath={range .items[*]}{.metadata.name} {.type}{end}"); got != "sh.helm.release.v1.mysql.v1 helm.sh/release.v1" {
		t.Errorf("the release's Secrets: %q", got)
	}

	// helm test: the chart's test pod connects to mysqld's port.
	test := h.must(t, "test", "mysql", "--logs")
	wantLines(t, "test", test, "Phase: Succeeded")
	if !strings.Contains(test, "mysql answers at mysql:3306") {
		t.Errorf("helm test mysql --logs has no line of the test pod's log:\n%s", test)
	}

	helmValues(t, h, k)

	// The guestbook: three tiers ready, and its test writes and reads a message.
	h.must(t, "install", "guestbook", "stable/guestbook", "--wait", "--timeout", "5m")
	for _, d := range []string{"frontend", "agnhost-primary", "agnhost-replica"} {
		if jsonpath("deployment", d, "{.status.readyReplicas}") != jsonpath("deployment", d, "{.spec.replicas}") {
			t.Errorf("install guestbook --wait returned with Deployment %s not ready", d)
		}
	}
	wantLines(t, "test guestbook", h.must(t, "test", "guestbook"), "Phase: Succeeded")

	// Uninstall removes what the release made; the claim's volume goes
	// with it (the standard class reclaims by Delete).
	pv := jsonpath("pvc", "mysql", "{.spec.volumeName}")
	wantLines(t, "uninstall", h.must(t, "uninstall", "mysql", "--wait"), `release "mysql" uninstalled`)
	for _, obj := range []string{"deployment/mysql", "service/mysql", "secret/mysql", "pvc/mysql", "secret/sh.helm.release.v1.mysql.v1"} {
		if out, _, code := k.kubectl(t, "get", obj); code == 0 {
			t.Errorf("after helm uninstall mysql, %s is still there:\n%s", obj, out)
		}
	}
	waitGone(t, k, "pv/"+pv)
	h.must(t, "uninstall", "guestbook", "--wait")
	if list := h.must(t, "list"); strings.Contains(list, "mysql") || strings.Contains(list, "guestbook") {
		t.Errorf("helm list after the uninstalls:\n%s", list)
	}
}

// helmValues is 5.2: -f and --set on one release (--set wins on the same
// key), then upgrade, history and rollback restoring the earlier objects,
// and uninstall. The nginx chart's post-install hook Job must complete
// for the install to succeed, and is deleted once it has.
func helmValues(t *testing.T, h *helmRunner, k *kubectlRunner) {
	t.Helper()
	jsonpath := func(kind, obj, path string) string {
		return k.mustKubectl(t, "get", kind, obj, "-o", "jsonpath="+path)
	}
	values := h.file(t, "web-values.yaml", "replicaCount: 3\nservice:\n  port: 9090\n")
	h.must(t, "install", "web", "stable/nginx", "-f", values, "--set", "service.port=8080", "--wait", "--timeout", "5m")
	if got := jsonpath("deployment", "web-nginx", "{.spec.replicas}"); got != "3" {
		t.Errorf("replicas %s, want 3 from the -f file", got)
	}
	if got := jsonpath("service", "web-nginx", "{.spec.ports[0].port}"); got != "8080" {
		t.Errorf("the Service's port %s, want 8080: --set wins over -f's 9090", got)
	}
	if ready := jsonpath("deployment", "web-nginx", "{.status.readyReplicas}"); ready != "3" {
		t.Errorf("install --wait returned with %q ready replicas, want 3", ready)
	}
	if out, _, code := k.kubectl(t, "get", "job", "web-nginx-smoke-test"); code == 0 {
		t.Errorf("the post-install hook Job is still there (hook-delete-policy hook-succeeded):\n%s", out)
	}

	h.must(t, "upgrade", "web", "stable/nginx", "--reuse-values", "--set", "replicaCount=1", "--wait", "--timeout", "5m")
	if got := jsonpath("deployment", "web-nginx", "{.spec.replicas}"); got != "1" {
		t.Errorf("after the upgrade, replicas %s, want 1", got)
	}
	if got := jsonpath("service", "web-nginx", "{.spec.ports[0].port}"); got != "8080" {
		t.Errorf("after upgrade --reuse-values, the Service's port %s, want 8080", got)
	}
	history := h.must(t, "history", "web")
	if !hasRowMatching(history, "1", "superseded", "nginx-1.0.0", "1.27.3", "Install complete") ||
		!hasRowMatching(history, "2", "deployed", "nginx-1.0.0", "1.27.3", "Upgrade complete") {
		t.Errorf("helm history web after the upgrade:\n%s", history)
	}

	wantLines(t, "rollback", h.must(t, "rollback", "web", "1", "--wait", "--timeout", "5m"), "Rollback was a success! Happy Helming!")
	if got := jsonpath("deployment", "web-nginx", "{.spec.replicas}"); got != "3" {
		t.Errorf("after rollback to 1, replicas %s, want 3 again", got)
	}
	if ready := jsonpath("deployment", "web-nginx", "{.status.readyReplicas}"); ready != "3" {
		t.Errorf("rollback --wait returned with %q ready replicas, want 3", ready)
	}
	if history := h.must(t, "history", "web"); !hasRowMatching(history, "3", "deployed", "nginx-1.0.0", "Rollback to 1") {
		t.Errorf("helm history web after the rollback:\n%s", history)
	}
	wantLines(t, "test web", h.must(t, "test", "web"), "Phase: Succeeded")

	h.must(t, "uninstall", "web", "--wait")
	// The test pod is a hook, not one of the release's objects: uninstall
	// leaves it, as on any cluster (it goes with the next test run, or by
	// hand).
	for _, obj := range []string{"deployment/web-nginx", "service/web-nginx"} {
		if out, _, code := k.kubectl(t, "get", obj); code == 0 {
			t.Errorf("after helm uninstall web, %s is still there:\n%s", obj, out)
		}
	}
	if got := k.mustKubectl(t, "get", "secrets", "-l", "owner=helm,name=web", "-o", "name"); got != "" {
		t.Errorf("the release's Secrets after uninstall: %q", got)
	}
}

// TestHelmTestFailingPodFails: a chart whose test pod fails makes `helm
// test` fail, naming the pod, and --logs prints what the pod said, as on
// a real cluster.
func TestHelmTestFailingPodFails(t *testing.T) {
	t.Parallel()
	var helms []string
	for _, name := range []string{"helm", "helm3"} {
		if _, err := os.Stat(filepath.Join("..", "bin", name)); err == nil {
			helms = append(helms, name)
		} else {
			t.Logf("bin/%s is not built: `make tools` builds it", name)
		}
	}
	if len(helms) == 0 {
		t.Skip("neither bin/helm nor bin/helm3 is built: `make tools` builds them")
	}
	c := startCluster(t, nil, "node01")
	for _, name := range helms {
		h := newHelm(t, c, name)
		release := "broken-" + name
		chart := filepath.Dir(h.file(t, "broken/Chart.yaml", "apiVersion: v2\nname: broken\nversion: 0.1.0\n"))
		h.file(t, "broken/templates/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  db: db.invalid:3306\n")
		h.file(t, "broken/templates/tests/test.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
  containers:
  - name: test
    image: busybox:1.36
    command: ["sh", "-c", "echo 'cannot reach the database at db.invalid:3306'; exit 1"]
`)
		h.must(t, "install", release, chart, "--wait", "--timeout", "3m")
		out, errOut, code := h.run(t, "test", release, "--logs")
		if code == 0 {
			t.Fatalf("%s test %s succeeded with a failing test pod:\n%s", name, release, out)
		}
		if !strings.Contains(errOut, release+"-test") || !strings.Contains(errOut, "failed") {
			t.Errorf("%s test: the error does not name the failed pod:\n%s", name, errOut)
		}
		if !strings.Contains(out, "cannot reach the database at db.invalid:3306") {
			t.Errorf("%s test --logs: the pod's log is not shown:\nstdout:\n%s\nstderr:\n%s", name, out, errOut)
		}
		wantLines(t, name+" test", out, "Phase: Failed")
	}
}

// hasRowStarting says whether a table has a row whose first cells are
// those of prefix (cells split on spaces).
func hasRowStarting(table, prefix string) bool {
	want := strings.Fields(prefix)
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(want) && strings.Join(f[:len(want)], " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}

// hasRowMatching says whether a table has a row starting with cells[0]
// and holding each of the other cells, in order (helm's UPDATED and
// DESCRIPTION columns hold spaces).
func hasRowMatching(table string, cells ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != cells[0] {
			continue
		}
		rest, ok := strings.Join(f[1:], " "), true
		for _, c := range cells[1:] {
			i := strings.Index(rest, c)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(c):]
		}
		if ok {
			return true
		}
	}
	return false
}

// waitGone waits until kubectl get OBJ finds nothing.
func waitGone(t *testing.T, k *kubectlRunner, obj string) {
	t.Helper()
	testserver.EventuallyWithin(t, time.Minute, obj+" is gone", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", obj)
		return code != 0, out + errOut
	})
}
