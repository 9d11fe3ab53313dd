package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// A Deployment whose pods mount a Secret: the controller manager's
// controllers make its ReplicaSet and pods as their own service accounts,
// the scheduler binds them, and each kubelet reads the Secret as its node.
const leastPrivilegeApp = `apiVersion: v1
kind: Secret
metadata:
  name: web-tls
stringData:
  tls.key: s3cr3t
---
apiVersion: v1
kind: Secret
metadata:
  name: db-password
stringData:
  password: not-for-nodes
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: web
          image: busybox:1.36
          command: [sh, -c, 'cat /tls/tls.key; echo; sleep 3600']
          volumeMounts:
            - {name: tls, mountPath: /tls}
      volumes:
        - name: tls
          secret: {secretName: web-tls}
`

// Least privilege (issue "Security"): the controller manager, the
// scheduler and each kubelet on their own kubeconfigs over HTTPS, holding
// only the default roles of their identities, under Node,RBAC and
// NodeRestriction; and the clusterrole-aggregation controller at work.
func TestComponentsRunWithLeastPrivilege(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	// node01 also runs a static pod: its mirror pod is what NodeRestriction
	// lets a node create.
	manifests := t.TempDir()
	static := "apiVersion: v1\nkind: Pod\nmetadata: {name: static-web}\nspec:\n  containers: [{name: web, image: nginx:1.25}]\n"
	if err := os.WriteFile(filepath.Join(manifests, "static-web.yaml"), []byte(static), 0o644); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--audit-log-path", auditLog}}, kubeletNode{name: "node01", flags: []string{"--pod-manifest-path", manifests}},
		kubeletNode{name: "node02"})
	admin := &kubeconfigRunner{kubeconfig: filepath.Join(c.certDir(), "admin.kubeconfig"), cacheDir: t.TempDir(), dir: t.TempDir()}
	secure := fmt.Sprintf("https://127.0.0.1:%d", c.securePort)

	testserver.EventuallyWithin(t, 30*time.Second, "both nodes register as themselves and are Ready", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
		return out == "node01=True node02=True ", out + errOut
	})
	testserver.EventuallyWithin(t, 30*time.Second, "node01's static pod shows as its mirror pod", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "pod", "static-web-node01", "-o", "jsonpath={.status.phase} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}")
		return out == "Running Node/node01", out + errOut
	})
	admin.must(t, "apply", "-f", admin.manifest(t, "app.yaml", leastPrivilegeApp))
	var pods struct {
		Items []struct {
			Metadata struct{ Name string }
			Spec     struct{ NodeName string }
			Status   struct{ Phase string }
		}
	}
	testserver.EventuallyWithin(t, 60*time.Second, "the Deployment's two pods run, their Secret mounted", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "pods", "-l", "app=web", "-o", "json")
		if json.Unmarshal([]byte(out), &pods) != nil || len(pods.Items) != 2 {
			return false, out + errOut
		}
		for _, p := range pods.Items {
			logs, _, _ := admin.run(t, "logs", p.Metadata.Name)
			if p.Status.Phase != "Running" || logs != "s3cr3t\n" {
				return false, fmt.Sprintf("%s on %q: %s, logs %q", p.Metadata.Name, p.Spec.NodeName, p.Status.Phase, logs)
			}
		}
		return true, ""
	})

	// The kubelet's own certificate, as curl --cert would present it.
	node := pods.Items[0].Spec.NodeName
	asNode := func(method, path, body string) (int, string) {
		return certRequest(t, c.certDir(), "kubelet-"+node, method, secure+path, body)
	}
	if code, body := asNode("GET", "/api/v1/namespaces/default/secrets/web-tls", ""); code != http.StatusOK {
		t.Errorf("%s reads the Secret its pod mounts: %d %s, want 200", node, code, body)
	}
	forbidden := fmt.Sprintf(`secrets "db-password" is forbidden: User "system:node:%s" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node '%s' and this object`, node, node)
	if code, body := asNode("GET", "/api/v1/namespaces/default/secrets/db-password", ""); code != http.StatusForbidden || statusMessage(body) != forbidden {
		t.Errorf("%s reads a Secret its pods do not use: %d %s\nwant 403 %s", node, code, body, forbidden)
	}
	if code, body := asNode("GET", "/api/v1/namespaces/default/secrets", ""); code != http.StatusForbidden {
		t.Errorf("%s lists every Secret: %d %s, want 403", node, code, body)
	}
	// A node asks for tokens for its pods only: NodeRestriction refuses a
	// token of its pod's service account bound to nothing.
	unbound := `serviceaccounts "default" is forbidden: node requested token not bound to a pod`
	if code, body := asNode("POST", "/api/v1/namespaces/default/serviceaccounts/default/token", `{"spec":{}}`); code != http.StatusForbidden || statusMessage(body) != unbound {
		t.Errorf("%s asks for an unbound token: %d %s\nwant 403 %s", node, code, body, unbound)
	}
	other := map[string]string{"node01": "node02", "node02": "node01"}[node]
	refused := fmt.Sprintf(`nodes "%s" is forbidden: node "%s" is not allowed to modify node "%s"`, other, node, other)
	code, body := asNode("PATCH", "/api/v1/nodes/"+other, `{"metadata":{"labels":{"stolen":"yes"}}}`)
	if code != http.StatusForbidden || statusMessage(body) != refused {
		t.Errorf("%s patches %s: %d %s\nwant 403 %s", node, other, code, body, refused)
	}
	if code, body := asNode("PATCH", "/api/v1/nodes/"+node, `{"metadata":{"labels":{"example.com/rack":"r1"}}}`); code != http.StatusOK {
		t.Errorf("%s labels its own Node: %d %s, want 200", node, code, body)
	}

	// admin, edit and view are aggregated: a ClusterRole labelled
	// aggregate-to-admin adds its rules to admin.
	if rules := clusterRoleRules(t, admin, "admin"); !strings.Contains(rules, "rolebindings") || !strings.Contains(rules, "deployments") {
		t.Errorf("admin, aggregated from system:aggregate-to-admin and edit: %s", rules)
	}
	admin.must(t, "apply", "-f", admin.manifest(t, "widgets.yaml", `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widgets-admin
  labels: {rbac.authorization.k8s.io/aggregate-to-admin: "true"}
rules:
  - {apiGroups: [example.com], resources: [widgets], verbs: ["*"]}
`))
	testserver.EventuallyWithin(t, 20*time.Second, "the aggregation controller fills admin with widgets-admin's rule", func() (bool, string) {
		rules := clusterRoleRules(t, admin, "admin")
		return strings.Contains(rules, "widgets"), rules
	})
	if rules := clusterRoleRules(t, admin, "edit"); strings.Contains(rules, "widgets") {
		t.Errorf("edit got admin's widgets rule: %s", rules)
	}

	// The other controllers at work as their service accounts: a new
	// namespace gets its default ServiceAccount and the cluster's CA; a
	// Service its endpoints; a claim a provisioned volume, which a pod
	// mounts; deleting the Deployment takes its pods (the garbage
	// collector), deleting the namespace its content.
	admin.must(t, "create", "namespace", "team")
	testserver.EventuallyWithin(t, 20*time.Second, "team gets its default ServiceAccount and kube-root-ca.crt", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "serviceaccount/default", "configmap/kube-root-ca.crt", "-n", "team", "-o", "name")
		return out == "serviceaccount/default\nconfigmap/kube-root-ca.crt\n", out + errOut
	})
	admin.must(t, "expose", "deployment", "web", "--port", "80")
	testserver.EventuallyWithin(t, 20*time.Second, "the Service's endpoints list both pods", func() (bool, string) {
		out, _, _ := admin.run(t, "get", "endpoints", "web", "-o", "jsonpath={.subsets[*].addresses[*].ip}")
		return len(strings.Fields(out)) == 2, out
	})
	admin.must(t, "apply", "-n", "team", "-f", admin.manifest(t, "claim.yaml", `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: writer}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: w, image: busybox:1.36, command: [sh, -c, 'echo kept > /data/note; cat /data/note; sleep 3600'], volumeMounts: [{name: d, mountPath: /data}]}
  volumes:
    - {name: d, persistentVolumeClaim: {claimName: data}}
`))
	testserver.EventuallyWithin(t, 30*time.Second, "the claim is bound to a provisioned volume and its pod writes there", func() (bool, string) {
		logs, errOut, _ := admin.run(t, "logs", "-n", "team", "writer")
		return logs == "kept\n", logs + errOut
	})
	admin.must(t, "delete", "deployment", "web")
	testserver.EventuallyWithin(t, 30*time.Second, "the Deployment's pods are gone with it", func() (bool, string) {
		out, _, _ := admin.run(t, "get", "pods", "-l", "app=web", "-o", "name")
		return out == "", out
	})
	admin.must(t, "delete", "namespace", "team", "--wait=false")
	testserver.EventuallyWithin(t, 60*time.Second, "the namespace goes with its content", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "namespace", "team", "-o", "name")
		return strings.Contains(errOut, "NotFound"), out + errOut
	})

	// A fleet: one kubelet process for two nodes on kubelet-fleet.kubeconfig.
	// Each node registers, heartbeats and runs its pods as itself
	// (impersonated); the fleet may impersonate nodes and nobody else.
	c.startAs("kubelet-fleet", "kubelet", "--kubeconfig", filepath.Join(c.certDir(), "kubelet-fleet.kubeconfig"),
		"--node-name", "fleet", "--nodes", "2", "--port", "0", "--node-ip", "127.0.0.1", "--pod-logs-dir", filepath.Join(c.dir, "pod-logs", "fleet"),
		"--node-root", filepath.Join(c.dir, "nodes"), "--nfs-root", filepath.Join(c.dir, "nfs"))
	testserver.EventuallyWithin(t, 30*time.Second, "the fleet's nodes are Ready, each with its Lease", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "nodes", "fleet-1", "fleet-2", "-o", `jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {end}`)
		leases, _, _ := admin.run(t, "get", "lease", "-n", "kube-node-lease", "fleet-1", "fleet-2", "-o", "name")
		return out == "True True " && leases == "lease.coordination.k8s.io/fleet-1\nlease.coordination.k8s.io/fleet-2\n", out + errOut + leases
	})
	admin.must(t, "apply", "-f", admin.manifest(t, "on-fleet.yaml", `apiVersion: v1
kind: Pod
metadata: {name: on-fleet}
spec:
  nodeName: fleet-2
  terminationGracePeriodSeconds: 1
  containers:
    - {name: c, image: busybox:1.36, command: [sh, -c, 'cat /tls/tls.key; echo; sleep 3600'], volumeMounts: [{name: tls, mountPath: /tls}]}
  volumes:
    - {name: tls, secret: {secretName: web-tls}}
`))
	testserver.EventuallyWithin(t, 30*time.Second, "a pod on a fleet node runs with its Secret", func() (bool, string) {
		logs, errOut, _ := admin.run(t, "logs", "on-fleet")
		return logs == "s3cr3t\n", logs + errOut
	})
	asJane := `users "jane" is forbidden: User "mkube:kubelet-fleet" cannot impersonate resource "users" in API group "" at the cluster scope`
	if code, body := certRequest(t, c.certDir(), "kubelet-fleet", "GET", secure+"/api/v1/namespaces/default/pods", "", "Impersonate-User", "jane"); code != http.StatusForbidden || statusMessage(body) != asJane {
		t.Errorf("the fleet impersonates jane: %d %s\nwant 403 %s", code, body, asJane)
	}

	// The audit log names who did each step of the Deployment's way to
	// running pods (seed 000's 13 steps), each component as itself; the
	// controller manager's controllers as their service accounts, which
	// it impersonates.
	testserver.EventuallyWithin(t, 10*time.Second, "the audit log names each component at its step", func() (bool, string) {
		want := map[string]bool{
			"deployment-controller creates the ReplicaSet":   false,
			"replicaset-controller creates the pods":         false,
			"the scheduler binds a pod":                      false,
			"a kubelet reads its pod's Secret as its node":   false,
			"a kubelet reports its pod's status as its node": false,
			"the fleet acts as fleet-2, impersonated":        false,
		}
		for _, ev := range readAudit(t, auditLog) {
			ref, user, ok := ev.ObjectRef, ev.User.Username, ev.ResponseStatus.Code < 300
			controller := strings.TrimPrefix(ev.ImpersonatedUser.Username, "system:serviceaccount:kube-system:")
			if user != "system:kube-controller-manager" {
				controller = ""
			}
			switch {
			case !ok:
			case ev.Verb == "create" && ref.Resource == "replicasets" && controller == "deployment-controller":
				want["deployment-controller creates the ReplicaSet"] = true
			case ev.Verb == "create" && ref.Resource == "pods" && ref.Subresource == "" && controller == "replicaset-controller":
				want["replicaset-controller creates the pods"] = true
			case ev.Verb == "create" && ref.Subresource == "binding" && user == "system:kube-scheduler":
				want["the scheduler binds a pod"] = true
			case ev.Verb == "get" && ref.Resource == "secrets" && ref.Name == "web-tls" && strings.HasPrefix(user, "system:node:node0"):
				want["a kubelet reads its pod's Secret as its node"] = true
			case ref.Resource == "pods" && ref.Subresource == "status" && strings.HasPrefix(user, "system:node:node0"):
				want["a kubelet reports its pod's status as its node"] = true
			case user == "mkube:kubelet-fleet" && ev.ImpersonatedUser.Username == "system:node:fleet-2":
				want["the fleet acts as fleet-2, impersonated"] = true
			}
		}
		for _, seen := range want {
			if !seen {
				return false, fmt.Sprint(want)
			}
		}
		return true, ""
	})

	// Nobody was refused along the way: each component holds what it needs.
	for _, name := range []string{"controller-manager", "scheduler", "kubelet-node01", "kubelet-node02", "kubelet-fleet"} {
		data, _ := os.ReadFile(c.logs[name])
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "forbidden") {
				t.Errorf("%s was refused: %s", name, line)
			}
		}
	}
}

// clusterRoleRules is a ClusterRole's rules, as JSON.
func clusterRoleRules(t *testing.T, k *kubeconfigRunner, name string) string {
	t.Helper()
	var r rbacv1.ClusterRole
	if err := json.Unmarshal([]byte(k.must(t, "get", "clusterrole", name, "-o", "json")), &r); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(r.Rules)
	return string(data)
}

// certRequest sends a request over TLS with the client certificate
// <id>.crt of certDir, trusting its CA: curl --cacert ca.crt --cert
// <id>.crt --key <id>.key. A body is a merge patch; headers are
// name, value pairs.
func certRequest(t *testing.T, certDir, id, method, url, body string, headers ...string) (int, string) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, id+".crt"), filepath.Join(certDir, id+".key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}}}
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// statusMessage is a Status body's message.
func statusMessage(body string) string {
	var st struct{ Message string }
	json.Unmarshal([]byte(body), &st)
	return st.Message
}
