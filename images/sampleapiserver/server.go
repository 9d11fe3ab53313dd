package sampleapiserver

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

const (
	wardleGroup = "wardle.example.com"
	// selfSignedCertDir is --cert-dir's default, under WORKDIR /, where
	// the real one writes the pair it makes when given none.
	selfSignedCertDir = "apiserver.local.config/certificates"
)

// sampleAPIServers holds each running sample-apiserver by its process (as
// the catalog's agnhost netexec holds its state): the program runs once
// per container, its server once per connection.
var sampleAPIServers sync.Map

// wardleServer is one running sample-apiserver.
type wardleServer struct {
	p                 *shell.Process
	port              int32
	certFile, keyFile string // its serving key pair
	auth              *delegatedAuth
	store             wardleStore
}

// Main is the binary, /sample-apiserver: cobra's command under component-base's
// cli.Run, which logs a failure after start as klog's "command failed"
// and exits 1. It serves until SIGTERM, on which the generic server
// stops listening, drains and returns: exit 0.
func Main(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	s, err := startWardleServer(ctx, p, args)
	if err != nil {
		klogS(p, 'E', "run.go:72", "command failed", "err", err.Error())
		return 1, nil
	}
	sampleAPIServers.Store(p, s)
	defer sampleAPIServers.Delete(p)
	lib.KlogLine(p, 'I', "secure_serving.go:216", fmt.Sprintf("Serving securely on [::]:%d", s.port))
	klogS(p, 'I', "tlsconfig.go:243", "Starting DynamicServingCertificateController")
	if err := lib.ListenUntilStopped(ctx, p, s.port); err != nil {
		return 137, err
	}
	lib.KlogLine(p, 'I', "secure_serving.go:261", fmt.Sprintf("Stopped listening on [::]:%d", s.port))
	klogS(p, 'I', "tlsconfig.go:244", "Shutting down DynamicServingCertificateController")
	return 0, nil
}

// startWardleServer is the real one's path to serving: validate the
// options (--etcd-servers), load the serving pair, look up the
// delegated authentication configuration, load the admission plugins,
// start the controllers that watch the certificates.
func startWardleServer(ctx context.Context, p *shell.Process, args []string) (*wardleServer, error) {
	if lib.StringFlag(args, "etcd-servers", "") == "" {
		return nil, errors.New("--etcd-servers must be specified")
	}
	s := &wardleServer{p: p, port: int32(lib.IntFlag(args, "secure-port", 443)),
		certFile: lib.StringFlag(args, "tls-cert-file", ""), keyFile: lib.StringFlag(args, "tls-private-key-file", ""),
		store: wardleStore{objects: map[wardleKey]*wardleObject{}}}
	if s.certFile == "" && s.keyFile == "" {
		if err := s.selfSignedPair(); err != nil {
			return nil, fmt.Errorf("error creating self-signed certificates: %v", err)
		}
	}
	if s.certFile == "" || s.keyFile == "" {
		return nil, errors.New("missing filename for serving cert")
	}
	if _, err := lib.LoadKeyPair(p.FS, s.certFile, s.keyFile); err != nil {
		return nil, err
	}
	auth, err := loadDelegatedAuth(ctx, p, lib.BoolFlag(args, "authentication-tolerate-lookup-failure", false))
	if err != nil {
		return nil, err
	}
	s.auth = auth
	lib.KlogLine(p, 'I', "plugins.go:157", "Loaded 3 mutating admission controller(s) successfully in the following order: NamespaceLifecycle,MutatingAdmissionWebhook,BanFlunder.")
	lib.KlogLine(p, 'I', "plugins.go:160", "Loaded 2 validating admission controller(s) successfully in the following order: ValidatingAdmissionPolicy,ValidatingAdmissionWebhook.")
	if auth.frontProxyConfigured {
		lib.KlogLine(p, 'I', "requestheader_controller.go:180", "Starting RequestHeaderAuthRequestController")
	}
	const configMap = "client-ca::kube-system::extension-apiserver-authentication::"
	klogS(p, 'I', "configmap_cafile_content.go:205", "Starting controller", "name", configMap+"client-ca-file")
	if auth.frontProxyConfigured {
		klogS(p, 'I', "configmap_cafile_content.go:205", "Starting controller", "name", configMap+"requestheader-client-ca-file")
	}
	klogS(p, 'I', "dynamic_serving_content.go:135", "Starting controller", "name", "serving-cert::"+s.certFile+"::"+s.keyFile)
	return s, nil
}

// selfSignedPair is SecureServingOptions.MaybeDefaultWithSelfSignedCerts:
// the pair already in --cert-dir, or a new one for localhost and
// 127.0.0.1 (client-go's GenerateSelfSignedCertKey, as the real one
// calls it), written there.
func (s *wardleServer) selfSignedPair() error {
	s.certFile, s.keyFile = "/"+selfSignedCertDir+"/apiserver.crt", "/"+selfSignedCertDir+"/apiserver.key"
	if _, err := lib.LoadKeyPair(s.p.FS, s.certFile, s.keyFile); err == nil {
		return nil
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return err
	}
	s.p.FS.WriteFile(s.certFile, cert)
	s.p.FS.WriteFile(s.keyFile, key)
	lib.KlogLine(s.p, 'I', "serving.go:405", fmt.Sprintf("Generated self-signed cert (%s/apiserver.crt, %s/apiserver.key)", selfSignedCertDir, selfSignedCertDir))
	return nil
}

// Serve answers one connection to the secure port of p, a running
// sample-apiserver's process: TLS
// with the serving pair as the files are now, asking for (not
// requiring) a client certificate, which authentication may verify;
// then the server's HTTP handler.
func Serve(p *shell.Process, conn net.Conn) {
	v, ok := sampleAPIServers.Load(p)
	if !ok {
		conn.Close()
		return
	}
	s := v.(*wardleServer)
	cert, err := lib.LoadKeyPair(p.FS, s.certFile, s.keyFile)
	if err != nil {
		conn.Close()
		return
	}
	tlsConn, peers, ok := lib.AcceptTLS(conn, cert)
	if !ok {
		return
	}
	lib.ServeHTTP(tlsConn, lib.Logged(p, "", s.handler(peers), nil))
}

// alwaysAllowPaths are the paths no one needs permission for
// (DelegatingAuthorizationOptions' AlwaysAllowPaths): the kubelet probes
// them without credentials.
var alwaysAllowPaths = []string{"/healthz", "/readyz", "/livez"}

// handler is the generic server's filter chain around its routes, for a
// connection whose client presented peers: authenticate (or 401), then
// authorize (or 403), then serve.
func (s *wardleServer) handler(peers []*x509.Certificate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := newRequestInfo(r)
		user, err := s.auth.authenticate(r, peers)
		if err != nil {
			klogS(s.p, 'E', "authentication.go:76", "Unable to authenticate the request", "err", err.Error())
			writeAPIError(w, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		if !slices.Contains(alwaysAllowPaths, r.URL.Path) {
			allowed, reason, err := s.auth.authorize(r.Context(), user, info)
			switch {
			case !allowed && err != nil:
				http.Error(w, fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err), http.StatusInternalServerError)
				return
			case !allowed:
				w.Header().Set("X-Content-Type-Options", "nosniff")
				writeAPIError(w, forbidden(user.Username, info, reason))
				return
			}
		}
		s.route(w, r, info)
	})
}

// route is the server's mux: health, discovery, the group's resources.
// Under /apis/wardle.example.com a path the group does not serve is
// go-restful's 404 Status; elsewhere the plain "404 page not found".
func (s *wardleServer) route(w http.ResponseWriter, r *http.Request, info requestInfo) {
	switch path := strings.TrimSuffix(r.URL.Path, "/"); {
	case slices.Contains(alwaysAllowPaths, r.URL.Path):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		io.WriteString(w, "ok")
	case path == "/apis":
		group := wardleAPIGroup()
		group.TypeMeta = metav1.TypeMeta{}
		// The generic server has no --advertise-address here, so its
		// external address is the secure port alone.
		group.ServerAddressByClientCIDRs = []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: fmt.Sprintf(":%d", s.port)}}
		s.discovery(w, r, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group}})
	case path == "/apis/"+wardleGroup:
		s.discovery(w, r, wardleAPIGroup())
	case slices.Contains(wardleVersions, strings.TrimPrefix(path, "/apis/"+wardleGroup+"/")):
		s.discovery(w, r, wardleAPIResources(strings.TrimPrefix(path, "/apis/"+wardleGroup+"/")))
	case info.isResource && info.group == wardleGroup && slices.Contains(wardleVersions, info.version):
		s.serveResource(w, r, info)
	case strings.HasPrefix(path, "/apis/"+wardleGroup+"/"):
		writeAPIError(w, pageNotFound())
	default:
		http.NotFound(w, r)
	}
}

// discovery answers a GET with a discovery document; go-restful routes
// no other method there.
func (s *wardleServer) discovery(w http.ResponseWriter, r *http.Request, doc any) {
	if r.Method != http.MethodGet {
		writeAPIError(w, methodNotAllowed())
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// wardleVersions are the group's versions, the preferred first, as the
// scheme's version priority orders them.
var wardleVersions = []string{"v1beta1", "v1alpha1"}

// wardleAPIGroup is /apis/wardle.example.com.
func wardleAPIGroup() metav1.APIGroup {
	var versions []metav1.GroupVersionForDiscovery
	for _, v := range wardleVersions {
		versions = append(versions, metav1.GroupVersionForDiscovery{GroupVersion: wardleGroup + "/" + v, Version: v})
	}
	return metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name: wardleGroup, Versions: versions, PreferredVersion: versions[0]}
}

// wardleAPIResources is /apis/wardle.example.com/VERSION: the version's
// resources in name order, with every verb their storage has (sorted,
// as the installer lists them) and the hash of their storage version,
// v1alpha1, which both versions of flunders share.
func wardleAPIResources(version string) metav1.APIResourceList {
	list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: wardleGroup + "/" + version}
	for _, res := range wardleResources {
		if !slices.Contains(res.versions, version) {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: res.name, SingularName: res.singular,
			Namespaced: res.namespaced, Kind: res.kind,
			Verbs:              metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			StorageVersionHash: storageVersionHash(wardleGroup, "v1alpha1", res.kind)})
	}
	return list
}

// storageVersionHash is discovery's StorageVersionHash: the first 8
// bytes of the SHA-256 of "group/version/kind", in base64, which changes
// when a resource's storage version does.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// requestInfo is what the generic server's RequestInfoFactory reads from
// a request, which authorization then asks about: a resource request
// (/api/VERSION/..., /apis/GROUP/VERSION/...) names its verb, group,
// version, namespace, resource, subresource and name; any other path is
// a non-resource request, its verb the method in lower case.
type requestInfo struct {
	isResource                                             bool
	verb, path                                             string
	group, version, namespace, resource, subresource, name string
}

func newRequestInfo(r *http.Request) requestInfo {
	info := requestInfo{verb: strings.ToLower(r.Method), path: r.URL.Path}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		info.version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		info.group, info.version, parts = parts[1], parts[2], parts[3:]
	default:
		return info
	}
	info.isResource = true
	info.verb = map[string]string{http.MethodPost: "create", http.MethodGet: "get", http.MethodHead: "get",
		http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}[r.Method]
	if parts[0] == "watch" {
		info.verb, parts = "watch", parts[1:]
	}
	// /namespaces/NS/RESOURCE/...; /namespaces/NS alone is the namespace
	// itself, as are its status and finalize.
	if len(parts) > 1 && parts[0] == "namespaces" {
		info.namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	for i, field := range []*string{&info.resource, &info.name, &info.subresource} {
		if i < len(parts) {
			*field = parts[i]
		}
	}
	query := r.URL.Query()
	switch {
	case info.name == "" && info.verb == "get":
		info.verb = "list"
		if watch, _ := strconv.ParseBool(query.Get("watch")); watch {
			info.verb = "watch"
		}
		// A list for one name is authorized as a get of it would be.
		if sel, err := fields.ParseSelector(query.Get("fieldSelector")); err == nil {
			if name, ok := sel.RequiresExactMatch("metadata.name"); ok {
				info.name = name
			}
		}
	case info.name == "" && info.verb == "delete":
		info.verb = "deletecollection"
	}
	return info
}

// forbidden is the 403 of a request authorization denied, in
// Kubernetes' words: `flunders.wardle.example.com is forbidden: User "x"
// cannot list resource "flunders" in API group "wardle.example.com" in
// the namespace "default"`, then the authorizer's reason if it gave one.
func forbidden(user string, info requestInfo, reason string) error {
	var msg string
	resource := info.resource
	if info.subresource != "" {
		resource += "/" + info.subresource
	}
	switch {
	case !info.isResource:
		msg = fmt.Sprintf("User %q cannot %s path %q", user, info.verb, info.path)
	case info.namespace != "":
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", user, info.verb, resource, info.group, info.namespace)
	default:
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", user, info.verb, resource, info.group)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: info.group, Resource: info.resource}, info.name, errors.New(msg))
}

// pageNotFound and methodNotAllowed are go-restful's answers to a path
// or method its routes do not have, as the generic server words them.
func pageNotFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "404: Page Not Found", 0, false)
}

func methodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "405: Method Not Allowed", 0, false)
}

// writeJSON answers v as JSON, as the server's serializer writes it
// (with a final newline).
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// writeAPIError answers err as a metav1.Status with its code; an error
// that is not an API error is a 500 InternalError.
func writeAPIError(w http.ResponseWriter, err error) {
	var apiErr apierrors.APIStatus
	if !errors.As(err, &apiErr) {
		apiErr = apierrors.NewInternalError(err)
	}
	status := apiErr.Status()
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	writeJSON(w, int(status.Code), status)
}

// klogS is a structured line of klog (InfoS, ErrorS): the quoted
// message, then each key="value".
func klogS(p *shell.Process, severity byte, source, msg string, keysAndValues ...string) {
	line := strconv.Quote(msg)
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		line += " " + keysAndValues[i] + "=" + strconv.Quote(keysAndValues[i+1])
	}
	lib.KlogLine(p, severity, source, line)
}
