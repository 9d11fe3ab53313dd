package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// The "Security" tokens, with the real kubectl and curl on the
// secure port: a service-account token from `kubectl create token` is 403
// until a RoleBinding, then 200; `kubectl auth whoami` with it; a token
// file's user; a pod's mounted token is a JWT for that pod that the API
// server believes until the pod is deleted; and the audit log says who
// did each.
func TestServiceAccountTokensAndTheAuditLog(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"kubectl", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not on PATH")
		}
	}
	files := t.TempDir()
	tokenFile := filepath.Join(files, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte("s3cret,alice,1001,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(files, "audit.log")
	c := startClusterWith(t, clusterFlags{apiserver: []string{"--token-auth-file", tokenFile, "--audit-log-path", auditLog}},
		kubeletNode{name: "node01"})
	pki := filepath.Join(c.dir, "etcd", "pki")
	admin := &kubeconfigRunner{kubeconfig: filepath.Join(pki, "admin.kubeconfig"), cacheDir: t.TempDir(), dir: t.TempDir()}
	server := secureServer(t, admin.kubeconfig)
	ca := filepath.Join(pki, "ca.crt")
	curl := func(token, path string) (int, string) {
		t.Helper()
		return curlGet(t, ca, token, server+path)
	}

	// kubectl create token: 403 until a RoleBinding, then 200.
	admin.must(t, "create", "serviceaccount", "robot")
	token := strings.TrimSpace(admin.must(t, "create", "token", "robot", "--duration", "2h"))
	const forbidden = `pods is forbidden: User \"system:serviceaccount:default:robot\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"`
	if code, body := curl(token, "/api/v1/namespaces/default/pods"); code != 403 || !strings.Contains(body, forbidden) {
		t.Fatalf("curl with robot's token before a binding: %d %s\nwant 403 %s", code, body, forbidden)
	}
	admin.must(t, "create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=default:robot")
	testserver.EventuallyWithin(t, 10*time.Second, "robot may list pods once bound", func() (bool, string) {
		code, body := curl(token, "/api/v1/namespaces/default/pods")
		return code == 200 && strings.Contains(body, `"kind":"PodList"`), fmt.Sprint(code, body)
	})
	whoami := tokenKubectl(t, server, ca, token, "auth", "whoami")
	for _, want := range []string{"system:serviceaccount:default:robot", "[system:serviceaccounts system:serviceaccounts:default system:authenticated]",
		"authentication.kubernetes.io/credential-id"} {
		if !strings.Contains(whoami, want) {
			t.Errorf("kubectl auth whoami with robot's token:\n%s\nwant %s", whoami, want)
		}
	}

	// The token file's user; a token nobody issued is 401.
	if out := tokenKubectl(t, server, ca, "s3cret", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"); out != `alice ["dev","ops","system:authenticated"]` {
		t.Errorf("kubectl auth whoami with the token file's s3cret: %q", out)
	}
	if code, body := curl("guess", "/api/v1/namespaces/default/pods"); code != 401 || !strings.Contains(body, `"reason":"Unauthorized"`) {
		t.Errorf("curl with a token nobody issued: %d %s, want 401 Unauthorized", code, body)
	}

	// A pod's mounted token: a JWT bound to the pod, believed while it lives.
	admin.must(t, "apply", "-f", admin.manifest(t, "web.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  serviceAccountName: robot
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: busybox:1.36
      command: [sh, -c, 'sleep 3600']
`))
	testserver.EventuallyWithin(t, 30*time.Second, "web runs", func() (bool, string) {
		out, errOut, _ := admin.run(t, "get", "pod", "web", "-o", "jsonpath={.status.phase}")
		return out == "Running", out + errOut
	})
	podToken := admin.must(t, "exec", "web", "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token")
	uid := admin.must(t, "get", "pod", "web", "-o", "jsonpath={.metadata.uid}")
	claims := jwtClaims(t, podToken)
	if k, _ := claims["kubernetes.io"].(map[string]any); k == nil || fmt.Sprint(k["pod"]) != fmt.Sprintf("map[name:web uid:%s]", uid) ||
		claims["sub"] != "system:serviceaccount:default:robot" {
		t.Errorf("the mounted token's claims: %v; want bound to web (%s)", claims, uid)
	}
	if out := tokenKubectl(t, server, ca, podToken, "auth", "whoami", "-o", "jsonpath={.status.userInfo.extra.authentication\\.kubernetes\\.io/pod-name}"); out != `["web"]` {
		t.Errorf("kubectl auth whoami with web's token: pod-name %q", out)
	}
	admin.must(t, "delete", "pod", "web", "--wait")
	if code, _ := curl(podToken, "/api/v1/namespaces/default/pods"); code != 401 {
		t.Errorf("curl with the token of a deleted pod: %d, want 401", code)
	}

	// The audit log: who did what, with what answer.
	testserver.EventuallyWithin(t, 10*time.Second, "the audit log has the token's create, robot's 403 and 200, and the binding", func() (bool, string) {
		events := readAudit(t, auditLog)
		found := map[string]bool{}
		for _, ev := range events {
			ref, user := ev.ObjectRef, ev.User.Username
			switch {
			case ev.Verb == "create" && ref.Resource == "serviceaccounts" && ref.Subresource == "token" && ref.Name == "robot" && user == "kubernetes-admin" &&
				ev.ResponseStatus.Code == 201:
				found["kubectl create token"] = true
			case user == "system:serviceaccount:default:robot" && ev.Verb == "list" && ev.ResponseStatus.Code == 403 && ev.Annotations["authorization.k8s.io/decision"] == "forbid":
				found["robot's 403"] = true
			case user == "system:serviceaccount:default:robot" && ev.Verb == "list" && ev.ResponseStatus.Code == 200 &&
				strings.Contains(ev.Annotations["authorization.k8s.io/reason"], `RoleBinding "robot-view/default"`):
				found["robot's 200"] = true
			case ev.Verb == "create" && ref.Subresource == "binding" && ref.Name == "web":
				found["the scheduler's binding"] = true
			}
		}
		return len(found) == 4, fmt.Sprintf("found %v in %d events", found, len(events))
	})
}

// --anonymous-auth=false: no credential is 401, even for /healthz; a bad
// --token-auth-file stops the start, saying why.
func TestAnonymousAuthFalseAndABadTokenFile(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not on PATH")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("only,two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(binDir, "apiserver"), "--port", "0", "--secure-port", fmt.Sprint(freePort(t)),
		"--bind-address", "127.0.0.1", "--data-dir", filepath.Join(dir, "bad"), "--token-auth-file", bad).CombinedOutput()
	if want := "token file '" + bad + "' must have at least 3 columns (token, user name, user uid), found 2"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("apiserver with a bad token file: %v\n%s\nwant it to exit saying %s", err, out, want)
	}

	c := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
	secure := c.startAPIServer(filepath.Join(dir, "etcd"), "--anonymous-auth=false")
	c.waitReady()
	ca := filepath.Join(dir, "etcd", "pki", "ca.crt")
	for _, path := range []string{"/healthz", "/api/v1/namespaces"} {
		if code, body := curlGet(t, ca, "", fmt.Sprintf("https://127.0.0.1:%d%s", secure, path)); code != 401 || !strings.Contains(body, `"message":"Unauthorized"`) {
			t.Errorf("anonymous GET %s with --anonymous-auth=false: %d %s, want 401", path, code, body)
		}
	}
}

// secureServer is the https:// server a kubeconfig names.
func secureServer(t *testing.T, kubeconfig string) string {
	t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`server: (https://\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no server in %s:\n%s", kubeconfig, data)
	}
	return string(m[1])
}

// curlGet is `curl --cacert ca -H "Authorization: Bearer token" url`: the
// status code and the body.
func curlGet(t *testing.T, ca, token, url string) (int, string) {
	t.Helper()
	args := []string{"-sS", "--cacert", ca, "-w", "\n%{http_code}", url}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	out, err := exec.Command("curl", args...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", url, err)
	}
	s := strings.TrimSpace(string(out))
	i := strings.LastIndex(s, "\n")
	var code int
	fmt.Sscan(s[i+1:], &code)
	return code, s[:max(i, 0)]
}

// tokenKubectl runs kubectl against server with only a bearer token, no
// kubeconfig.
func tokenKubectl(t *testing.T, server, ca, token string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command("kubectl", append([]string{"--server", server, "--certificate-authority", ca, "--token", token,
		"--cache-dir", filepath.Join(home, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
	out, errOut, code := runCommand(t, cmd)
	if code != 0 {
		t.Fatalf("kubectl --token %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// jwtClaims decodes a JWT's payload, unverified (the API server checks it).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err != nil || json.Unmarshal(data, &claims) != nil {
		t.Fatalf("a JWT payload that is not JSON: %q %v", data, err)
	}
	return claims
}

// auditEvent is the part of an audit.k8s.io/v1 Event the test reads.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef struct {
		Resource, Name, Subresource string
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

func readAudit(t *testing.T, path string) []auditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line is not an Event: %s", sc.Text())
		}
		out = append(out, ev)
	}
	return out
}
