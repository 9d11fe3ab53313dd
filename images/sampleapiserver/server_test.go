package sampleapiserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// sampleAPIServerArgv is the container of Kubernetes' Aggregator spec:
// the image's ENTRYPOINT and the spec's args.
var sampleAPIServerArgv = []string{"/sample-apiserver", "--etcd-servers=http://127.0.0.1:2379",
	"--tls-cert-file=/apiserver.local.config/certificates/tls.crt",
	"--tls-private-key-file=/apiserver.local.config/certificates/tls.key",
	"--audit-log-path=-", "--audit-log-maxage=0", "--audit-log-maxbackup=0"}

// fakeKubeAPIServer is the cluster's API server as the sample-apiserver's
// pod reaches it, at 10.96.0.1:443 over TLS with the pod's token: the
// extension-apiserver-authentication ConfigMap (or configMapErr),
// TokenReviews (bob-token is bob), SubjectAccessReviews (wardle-admins
// may do anything, carol may get and list, bob anything on flunders,
// any authenticated user discovery), and the namespaces default and
// doomed (terminating). It records the access reviews it answers.
type fakeKubeAPIServer struct {
	serving      tls.Certificate
	caPEM        []byte
	configMap    map[string]string
	configMapErr *apierrors.StatusError

	mu      sync.Mutex
	reviews []authorizationv1.SubjectAccessReviewSpec
}

func (k *fakeKubeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer sa-token" {
		kubeError(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	switch {
	case r.URL.Path == authConfigMapPath && k.configMapErr != nil:
		kubeError(w, k.configMapErr)
	case r.URL.Path == authConfigMapPath:
		json.NewEncoder(w).Encode(corev1.ConfigMap{Data: k.configMap})
	case r.URL.Path == "/apis/authentication.k8s.io/v1/tokenreviews":
		var review authenticationv1.TokenReview
		json.NewDecoder(r.Body).Decode(&review)
		if review.Spec.Token == "bob-token" {
			review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "bob"}}
		} else {
			review.Status.Error = "invalid token"
		}
		json.NewEncoder(w).Encode(review)
	case r.URL.Path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var review authorizationv1.SubjectAccessReview
		json.NewDecoder(r.Body).Decode(&review)
		k.mu.Lock()
		k.reviews = append(k.reviews, review.Spec)
		k.mu.Unlock()
		spec, res := review.Spec, review.Spec.ResourceAttributes
		review.Status.Allowed = slices.Contains(spec.Groups, "wardle-admins") ||
			(res == nil && slices.Contains(spec.Groups, "system:authenticated")) ||
			(res != nil && spec.User == "carol" && (res.Verb == "get" || res.Verb == "list")) ||
			(res != nil && spec.User == "bob" && res.Resource == "flunders")
		json.NewEncoder(w).Encode(review)
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/"):
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/")
		phases := map[string]corev1.NamespacePhase{"default": corev1.NamespaceActive, "doomed": corev1.NamespaceTerminating}
		if phase, ok := phases[name]; ok {
			json.NewEncoder(w).Encode(corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}})
			return
		}
		kubeError(w, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name))
	default:
		kubeError(w, apierrors.NewNotFound(schema.GroupResource{}, ""))
	}
}

// lastReview is the last access review the server answered, and how
// many it has.
func (k *fakeKubeAPIServer) lastReview() (authorizationv1.SubjectAccessReviewSpec, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.reviews) == 0 {
		return authorizationv1.SubjectAccessReviewSpec{}, 0
	}
	return k.reviews[len(k.reviews)-1], len(k.reviews)
}

func kubeError(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.ErrStatus
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	json.NewEncoder(w).Encode(status)
}

// dial is the pod's network: the API server's ClusterIP, nothing else.
func (k *fakeKubeAPIServer) dial(_ context.Context, _, address string) (net.Conn, error) {
	if address != "10.96.0.1:443" {
		return nil, fmt.Errorf("dial tcp %s: connect: no route to host", address)
	}
	pod, server := podnet.Pipe(&net.TCPAddr{IP: net.IPv4(10, 244, 1, 5), Port: 40000}, &net.TCPAddr{IP: net.IPv4(10, 96, 0, 1), Port: 443})
	go lib.ServeHTTP(tls.Server(server, &tls.Config{Certificates: []tls.Certificate{k.serving}}), k)
	return pod, nil
}

// testCA is a CA that issues test certificates.
type testCA struct {
	t    *testing.T
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newTestCA(t *testing.T, name string) *testCA {
	key := newTestKey(t)
	cert, pem := issue(t, key, nil, nil, &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign})
	return &testCA{t: t, cert: cert, key: key, pem: pem}
}

// pair is a key pair the CA signed from tmpl, for a TLS client or server.
func (ca *testCA) pair(tmpl *x509.Certificate) tls.Certificate {
	key := newTestKey(ca.t)
	_, certPEM := issue(ca.t, key, ca.cert, ca.key, tmpl)
	pair, err := tls.X509KeyPair(certPEM, credentialBundle(ca.t, key, nil))
	if err != nil {
		ca.t.Fatal(err)
	}
	return pair
}

// newFakeKubeAPIServer is a cluster whose ConfigMap names a front proxy
// CA and a client CA, returned with the clients' certificates: the
// aggregator's front-proxy-client, the same name from another CA, and
// carol (in devs) from the client CA.
func newFakeKubeAPIServer(t *testing.T) (k *fakeKubeAPIServer, frontProxy, stranger, carol tls.Certificate) {
	kubeCA, frontProxyCA, clientCA, otherCA := newTestCA(t, "kubernetes"), newTestCA(t, "front-proxy-ca"), newTestCA(t, "client-ca"), newTestCA(t, "other")
	clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	k = &fakeKubeAPIServer{caPEM: kubeCA.pem,
		serving: kubeCA.pair(&x509.Certificate{IPAddresses: []net.IP{net.IPv4(10, 96, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}),
		configMap: map[string]string{
			"client-ca-file":                     string(clientCA.pem),
			"requestheader-client-ca-file":       string(frontProxyCA.pem),
			"requestheader-allowed-names":        `["front-proxy-client"]`,
			"requestheader-username-headers":     `["X-Remote-User"]`,
			"requestheader-uid-headers":          `["X-Remote-Uid"]`,
			"requestheader-group-headers":        `["X-Remote-Group"]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		}}
	frontProxy = frontProxyCA.pair(&x509.Certificate{Subject: pkix.Name{CommonName: "front-proxy-client"}, ExtKeyUsage: clientAuth})
	stranger = otherCA.pair(&x509.Certificate{Subject: pkix.Name{CommonName: "front-proxy-client"}, ExtKeyUsage: clientAuth})
	carol = clientCA.pair(&x509.Certificate{Subject: pkix.Name{CommonName: "carol", Organization: []string{"devs"}}, ExtKeyUsage: clientAuth})
	return k, frontProxy, stranger, carol
}

// startSampleAPIServer runs the image's program with argv in a pod whose
// network is k's, with the serving pair mounted where the spec mounts
// its Secret (unless noCert) and the pod's service-account files; done
// receives its exit status.
func startSampleAPIServer(t *testing.T, k *fakeKubeAPIServer, argv []string, noCert bool) (p *shell.Process, stderr *syncBuffer, done chan int) {
	t.Helper()
	fs := shell.NewFS()
	if !noCert {
		cert, key := selfSigned(t)
		fs.WriteFile("/apiserver.local.config/certificates/tls.crt", cert)
		fs.WriteFile("/apiserver.local.config/certificates/tls.key", key)
	}
	fs.WriteFile(lib.ServiceAccountDir+"/token", []byte("sa-token"))
	fs.WriteFile(lib.ServiceAccountDir+"/ca.crt", k.caPEM)
	stderr = &syncBuffer{}
	p = shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: fs, Stdout: io.Discard, Stderr: stderr, Hostname: "sample-apiserver-deployment-0",
		Env: []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443"}, Programs: map[string]shell.Program{"sample-apiserver": Main}, Dial: k.dial})
	ctx, kill := context.WithCancel(context.Background())
	t.Cleanup(kill)
	done = make(chan int, 1)
	go func() {
		code, _ := p.Exec(ctx, argv)
		done <- code
	}()
	waitUntil(t, "serving or exiting", func() bool { return p.Listening(443) || len(done) > 0 })
	return p, stderr, done
}

func TestSampleAPIServerStartsAndStopsAsTheRealOne(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "extension-apiserver-authentication",
		errors.New(`User "system:serviceaccount:ns:default" cannot get resource "configmaps" in API group "" in the namespace "kube-system"`))
	tests := []struct {
		name         string
		argv         []string
		noCert       bool
		configMapErr *apierrors.StatusError
		code         int // -1: it serves, and exits 0 on SIGTERM
		stderr       []string
	}{
		{name: "the spec's container serves with its mounted pair, and stops on SIGTERM", argv: sampleAPIServerArgv, code: -1, stderr: []string{
			"] Loaded 3 mutating admission controller(s) successfully in the following order: NamespaceLifecycle,MutatingAdmissionWebhook,BanFlunder.",
			`] "Starting controller" name="serving-cert::/apiserver.local.config/certificates/tls.crt::/apiserver.local.config/certificates/tls.key"`,
			"secure_serving.go:216] Serving securely on [::]:443",
			"secure_serving.go:261] Stopped listening on [::]:443"}},
		{name: "without its Secret mounted it exits 1 in cli.Run's words", argv: sampleAPIServerArgv, noCert: true, code: 1, stderr: []string{
			`run.go:72] "command failed" err="open /apiserver.local.config/certificates/tls.crt: no such file or directory"`}},
		{name: "without --etcd-servers it does not start", argv: []string{"/sample-apiserver"}, code: 1, stderr: []string{
			`"command failed" err="--etcd-servers must be specified"`}},
		{name: "without TLS flags it makes and serves a self-signed pair", argv: []string{"/sample-apiserver", "--etcd-servers=http://127.0.0.1:2379"}, code: -1,
			stderr: []string{"serving.go:405] Generated self-signed cert (apiserver.local.config/certificates/apiserver.crt, apiserver.local.config/certificates/apiserver.key)"}},
		{name: "a service account the ConfigMap is forbidden to stops it, with the real hint", argv: sampleAPIServerArgv, configMapErr: forbidden, code: 1, stderr: []string{
			"W1201 11:00:00.000000       1 requestheader_controller.go:204] Unable to get configmap/extension-apiserver-authentication in kube-system.  Usually fixed by " +
				"'kubectl create rolebinding -n kube-system ROLEBINDING_NAME --role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'",
			`"command failed" err="unable to load configmap based request-header-client-ca-file: configmaps \"extension-apiserver-authentication\" is forbidden: User`}},
		{name: "--authentication-tolerate-lookup-failure goes on without it", argv: append(slices.Clone(sampleAPIServerArgv), "--authentication-tolerate-lookup-failure"),
			configMapErr: forbidden, code: -1, stderr: []string{
				"Usually fixed by", "authentication.go:398] Continuing without authentication configuration. This may treat all requests as anonymous.",
				"Serving securely on [::]:443"}},
		{name: "a cluster without the ConfigMap is one without client certificates", argv: sampleAPIServerArgv,
			configMapErr: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "extension-apiserver-authentication"), code: -1,
			stderr: []string{"Serving securely on [::]:443"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, _, _, _ := newFakeKubeAPIServer(t)
			k.configMapErr = tc.configMapErr
			p, stderr, done := startSampleAPIServer(t, k, tc.argv, tc.noCert)
			if tc.code == -1 {
				if len(done) > 0 {
					t.Fatalf("exited %d:\n%s", <-done, stderr)
				}
				p.Terminate()
			}
			select {
			case code := <-done:
				if want := max(tc.code, 0); code != want {
					t.Errorf("exit %d, want %d", code, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("sample-apiserver did not exit")
			}
			checkLines(t, "stderr", stderr.String(), tc.stderr)
		})
	}
}

// The requests of the Aggregator spec and of a user with kubectl, in
// order against one server: who asks (the aggregator's front proxy for
// alice, carol's client certificate, bob's token, no one), what, and
// the answer.
func TestSampleAPIServerServesWardleAsTheRealOne(t *testing.T) {
	k, frontProxy, stranger, carolCert := newFakeKubeAPIServer(t)
	p, stderr, done := startSampleAPIServer(t, k, sampleAPIServerArgv, false)
	if len(done) > 0 {
		t.Fatalf("exited:\n%s", stderr)
	}
	client := func(cert *tls.Certificate) *http.Client {
		cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a test of the server
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true,
			DialContext: func(context.Context, string, string) (net.Conn, error) {
				node, pod := podnet.Pipe(&net.TCPAddr{IP: net.IPv4(10, 244, 0, 1), Port: 40000}, &net.TCPAddr{IP: net.IPv4(10, 244, 1, 5), Port: 443})
				go Serve(p, pod)
				return node, nil
			}}}
	}
	type who struct {
		client  *http.Client
		headers map[string][]string
	}
	var (
		anyone   = who{client: client(nil)}
		alice    = who{client(&frontProxy), map[string][]string{"X-Remote-User": {"alice"}, "X-Remote-Group": {"wardle-admins"}, "X-Remote-Extra-Scopes": {"view"}}}
		intruder = who{client(&stranger), map[string][]string{"X-Remote-User": {"alice"}, "X-Remote-Group": {"wardle-admins"}}}
		carol    = who{client: client(&carolCert)}
		bob      = who{anyone.client, map[string][]string{"Authorization": {"Bearer bob-token"}}}
		mallory  = who{anyone.client, map[string][]string{"Authorization": {"Bearer stolen"}}}
	)
	const (
		flunders   = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
		flunderV1b = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders"
	)
	flunder := func(name string) string {
		return `{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{"name":"` + name + `"}}`
	}
	tests := []struct {
		name               string
		as                 who
		method, path, body string
		contentType        string
		code               int
		message            string   // an error Status's message
		want               []string // in the body, in this order
		notWant            string
		review             *authorizationv1.SubjectAccessReviewSpec // the access review the request made
		noReview           bool
	}{
		{name: "readyz answers the kubelet's probe, with no review", as: anyone, method: "GET", path: "/readyz", code: 200, want: []string{"ok"}, noReview: true},
		{name: "discovery is not for the anonymous", as: anyone, method: "GET", path: "/apis", code: 403,
			message: `forbidden: User "system:anonymous" cannot get path "/apis"`,
			review: &authorizationv1.SubjectAccessReviewSpec{User: "system:anonymous", Groups: []string{"system:unauthenticated"},
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/apis", Verb: "get"}}},
		{name: "discovery lists the group, v1beta1 preferred", as: alice, method: "GET", path: "/apis", code: 200, want: []string{
			`{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"wardle.example.com","versions":[{"groupVersion":"wardle.example.com/v1beta1","version":"v1beta1"},` +
				`{"groupVersion":"wardle.example.com/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"wardle.example.com/v1beta1","version":"v1beta1"},` +
				`"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":":443"}]}]}`}},
		{name: "v1alpha1 has both resources", as: alice, method: "GET", path: "/apis/wardle.example.com/v1alpha1", code: 200, want: []string{
			`"groupVersion":"wardle.example.com/v1alpha1"`,
			`{"name":"fischers","singularName":"fischer","namespaced":false,"kind":"Fischer","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"`,
			`{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder"`}},
		{name: "v1beta1 has flunders only", as: alice, method: "GET", path: "/apis/wardle.example.com/v1beta1", code: 200,
			want: []string{`"resources":[{"name":"flunders"`}, notWant: "fischers"},
		{name: "the anonymous may not list flunders", as: anyone, method: "GET", path: flunders, code: 403,
			message: `flunders.wardle.example.com is forbidden: User "system:anonymous" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "default"`},
		{name: "a certificate the front proxy's CA did not sign is refused", as: intruder, method: "GET", path: flunders, code: 401, message: "Unauthorized"},
		{name: "a token the API server does not know is refused", as: mallory, method: "GET", path: flunders, code: 401, message: "Unauthorized"},
		{name: "the aggregator's user creates a flunder, reviewed as the headers name them", as: alice, method: "POST", path: flunders,
			body: `{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{"labels":{"sample-label":"true"},"name":"test-flunder","namespace":"default"}}`,
			code: 201, want: []string{`{"kind":"Flunder","apiVersion":"wardle.example.com/v1alpha1","metadata":{"name":"test-flunder","namespace":"default","uid":"`,
				`"resourceVersion":"1","creationTimestamp":"2026-12-01T11:00:00Z","labels":{"sample-label":"true"}},"spec":{},"status":{}}`},
			review: &authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"wardle-admins", "system:authenticated"},
				Extra:              map[string]authorizationv1.ExtraValue{"scopes": {"view"}},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Group: "wardle.example.com", Version: "v1alpha1", Resource: "flunders"}}},
		{name: "the same name again is AlreadyExists", as: alice, method: "POST", path: flunders, body: flunder("test-flunder"), code: 409,
			message: `flunders.wardle.example.com "test-flunder" already exists`},
		{name: "a v1beta1 flunder refers to the first", as: alice, method: "POST", path: flunderV1b,
			body: `{"apiVersion":"wardle.example.com/v1beta1","kind":"Flunder","metadata":{"name":"a-flunder"},"spec":{"flunderReference":"test-flunder","referenceType":"Flunder"}}`,
			code: 201, want: []string{`"apiVersion":"wardle.example.com/v1beta1"`, `"spec":{"flunderReference":"test-flunder","referenceType":"Flunder"}`}},
		{name: "carol's client certificate lets her read it, converted to v1alpha1", as: carol, method: "GET", path: flunders + "/a-flunder", code: 200,
			want: []string{`"name":"a-flunder"`, `"spec":{"reference":"test-flunder","referenceType":"Flunder"}`}},
		{name: "carol may not create", as: carol, method: "POST", path: flunders, body: flunder("carols"), code: 403,
			message: `flunders.wardle.example.com is forbidden: User "carol" cannot create resource "flunders" in API group "wardle.example.com" in the namespace "default"`},
		{name: "a flunder that is not there is NotFound", as: bob, method: "GET", path: flunders + "/nope", code: 404,
			message: `flunders.wardle.example.com "nope" not found`},
		{name: "bob's token lists them in name order", as: bob, method: "GET", path: flunders, code: 200,
			want: []string{`{"kind":"FlunderList","apiVersion":"wardle.example.com/v1alpha1","metadata":{"resourceVersion":"2"},"items":[{"metadata":{"name":"a-flunder"`, `"name":"test-flunder"`}},
		{name: "a label selector picks the labelled one", as: bob, method: "GET", path: flunders + "?labelSelector=sample-label%3Dtrue", code: 200,
			want: []string{`"name":"test-flunder"`}, notWant: "a-flunder"},
		{name: "a Fischer disallows a name", as: alice, method: "POST", path: "/apis/wardle.example.com/v1alpha1/fischers",
			body: `{"apiVersion":"wardle.example.com/v1alpha1","kind":"Fischer","metadata":{"name":"ban"},"disallowedFlunders":["banned"]}`,
			code: 201, want: []string{`"metadata":{"name":"ban","uid":"`, `"disallowedFlunders":["banned"]}`}},
		{name: "BanFlunder refuses that name", as: alice, method: "POST", path: flunders, body: flunder("banned"), code: 403,
			message: `flunders.wardle.example.com "banned" is forbidden: this name may not be used, please change the resource name`},
		{name: "NamespaceLifecycle refuses a namespace the cluster does not have", as: alice, method: "POST",
			path: "/apis/wardle.example.com/v1alpha1/namespaces/missing/flunders", body: flunder("x"), code: 404, message: `namespaces "missing" not found`},
		{name: "and one being terminated", as: alice, method: "POST", path: "/apis/wardle.example.com/v1alpha1/namespaces/doomed/flunders", body: flunder("x"), code: 403,
			message: `flunders.wardle.example.com "x" is forbidden: unable to create new content in namespace doomed because it is being terminated`},
		{name: "a reference of the wrong type is invalid", as: alice, method: "POST", path: flunderV1b,
			body: `{"metadata":{"name":"bad"},"spec":{"flunderReference":"a","referenceType":"Fischer"}}`, code: 422,
			message: `Flunder.wardle.example.com "bad" is invalid: spec.flunderReference: Invalid value: "a": cannot be set if referenceType is not Flunder`},
		{name: "a flunder needs a name", as: alice, method: "POST", path: flunders, body: `{"metadata":{}}`, code: 422,
			message: `Flunder.wardle.example.com "" is invalid: metadata.name: Required value: name or generateName is required`},
		{name: "a merge patch adds a label", as: alice, method: "PATCH", path: flunders + "/test-flunder", body: `{"metadata":{"labels":{"color":"blue"}}}`,
			contentType: "application/merge-patch+json", code: 200, want: []string{`"resourceVersion":"4"`, `"labels":{"color":"blue","sample-label":"true"}`}},
		{name: "an update must give the resourceVersion", as: alice, method: "PUT", path: flunders + "/a-flunder", body: flunder("a-flunder"), code: 422,
			message: `Flunder.wardle.example.com "a-flunder" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`},
		{name: "a stale one conflicts", as: alice, method: "PUT", path: flunders + "/a-flunder",
			body: `{"metadata":{"name":"a-flunder","resourceVersion":"1"}}`, code: 409,
			message: `Operation cannot be fulfilled on flunders.wardle.example.com "a-flunder": the object has been modified; please apply your changes to the latest version and try again`},
		{name: "delete answers a Success Status", as: alice, method: "DELETE", path: flunders + "/test-flunder", code: 200,
			want: []string{`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"test-flunder","group":"wardle.example.com","kind":"flunders","uid":"`}},
		{name: "then it is gone", as: alice, method: "GET", path: flunders + "/test-flunder", code: 404, message: `flunders.wardle.example.com "test-flunder" not found`},
		{name: "deletecollection answers what it deleted", as: alice, method: "DELETE", path: flunders, code: 200,
			want: []string{`{"kind":"FlunderList"`, `"items":[{"metadata":{"name":"a-flunder"`}},
		{name: "then the namespace has none", as: alice, method: "GET", path: flunders, code: 200, want: []string{`"items":[]}`}},
		{name: "watch is not simulated", as: alice, method: "GET", path: flunders + "?watch=true", code: 405,
			message: "mkube's simulated sample-apiserver does not serve watch"},
		{name: "a resource the group does not have is go-restful's 404", as: alice, method: "GET", path: "/apis/wardle.example.com/v1alpha1/namespaces/default/foos",
			code: 404, message: "the server could not find the requested resource"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, reviewsBefore := k.lastReview()
			req, _ := http.NewRequest(tc.method, "https://sample-api.ns.svc:7443"+tc.path, strings.NewReader(tc.body))
			for name, values := range tc.as.headers {
				req.Header[name] = values
			}
			req.Header.Set("Content-Type", "application/json")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := tc.as.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			body := string(data)
			if resp.StatusCode != tc.code {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.code)
			}
			if tc.message != "" {
				var status metav1.Status
				if err := json.Unmarshal(data, &status); err != nil || status.Kind != "Status" || status.Message != tc.message ||
					resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("answered %s (%s), want the message %q", body, resp.Header.Get("Content-Type"), tc.message)
				}
			}
			rest := body
			for _, want := range tc.want {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("answered %s\nwant, after what came before: %s", body, want)
				}
				rest = rest[i+len(want):]
			}
			if tc.notWant != "" && strings.Contains(body, tc.notWant) {
				t.Errorf("answered %s, with %q", body, tc.notWant)
			}
			last, reviews := k.lastReview()
			if tc.noReview && reviews != reviewsBefore {
				t.Errorf("the request made %d access reviews", reviews-reviewsBefore)
			}
			if tc.review != nil {
				if reviews == reviewsBefore {
					t.Fatal("the request made no access review")
				}
				if diff := cmp.Diff(*tc.review, last); diff != "" {
					t.Errorf("access review (-want +got):\n%s", diff)
				}
			}
		})
	}
	// The intruder's certificate failed both certificate authenticators;
	// mallory's token, the review.
	checkLines(t, "stderr", stderr.String(), []string{
		`authentication.go:76] "Unable to authenticate the request" err="[x509: certificate signed by unknown authority, verifying certificate SN=`,
		`authentication.go:76] "Unable to authenticate the request" err="invalid token"`})
}
