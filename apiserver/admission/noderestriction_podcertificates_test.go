package admission

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

// requesters allows the verb request-serviceaccounts-podcertificate-signer
// on the (signer, service account) pairs it holds.
type requesters map[[2]string]bool

func (r requesters) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	if a.Verb == "request-serviceaccounts-podcertificate-signer" && r[[2]string{a.Resource, a.Name}] {
		return authorization.Allow, "", nil
	}
	return authorization.NoOpinion, "", nil
}

func TestANodeRequestsPodCertificatesOnlyForItsOwnPods(t *testing.T) {
	node01 := authenticationv1.UserInfo{Username: "system:node:node01", Groups: []string{"system:nodes", "system:authenticated"}}
	withCert := func(name, node string, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Annotations: annotations},
			Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "web-sa", Volumes: []corev1.Volume{{Name: "tls",
				VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/spiffe", KeyType: "ED25519", CredentialBundlePath: "c.pem"}}}}}}}}}
	}
	objs := fakeObjects{nodes: {&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", UID: "n1"}}},
		pods: {withCert("web", "node01", nil), withCert("db", "node02", nil),
			withCert("static", "node01", map[string]string{corev1.MirrorPodAnnotationKey: "hash"})},
		serviceAccounts: {&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-sa", UID: "sa1"}}}}
	request := func(edit func(s *certificatesv1.PodCertificateRequestSpec)) Attributes {
		r := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "req-1"},
			Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/spiffe", PodName: "web", PodUID: "uid-web",
				ServiceAccountName: "web-sa", ServiceAccountUID: "sa1", NodeName: "node01", NodeUID: "n1"}}
		if edit != nil {
			edit(&r.Spec)
		}
		return Attributes{Operation: Create, Resource: podCertificateRequests, Namespace: "default", Object: r}
	}
	const forbiddenReq = `podcertificaterequests.certificates.k8s.io "req-1" is forbidden: `
	tests := []struct {
		name    string
		a       Attributes
		allowed requesters
		want    string // the error, "" if admitted
	}{
		{"a node asks for its pod's certificate, of the signer the pod mounts", request(nil), nil, ""},
		{"not for another node", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "node02" }), nil,
			forbiddenReq + `PodCertificateRequest.Spec.NodeName="node02", which is not the requesting node "node01"`},
		{"nor naming an earlier Node of its name", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "n0" }), nil,
			`PodCertificateRequest for pod "default/web" names node UID "n0", inconsistent with the running node ("n1")`},
		{"nor for another node's pod", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "db", "uid-db" }), nil,
			forbiddenReq + `pod "default/db" is not running on node "node01" named in the PodCertificateRequest`},
		{"nor for an earlier pod of the name", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "old" }), nil,
			`PodCertificateRequest for pod "default/web" contains pod UID ("old") which differs from running pod "uid-web"`},
		{"nor for a pod that is not there", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "gone" }), nil,
			`while retrieving pod "default/gone" named in the PodCertificateRequest: pods "gone" not found`},
		{"nor for a mirror pod", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName, s.PodUID = "static", "uid-static" }), nil,
			forbiddenReq + `pod "default/static" is a mirror pod`},
		{"nor as another service account", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "admin" }), nil,
			forbiddenReq + `PodCertificateRequest for pod "default/web" contains serviceAccountName ("admin") that differs from running pod ("web-sa")`},
		{"nor naming an earlier service account", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "sa0" }), nil,
			`PodCertificateRequest for pod "default/web" names service account UID "sa0", which differs from the running service account ("sa1")`},
		{"nor of a signer the pod does not mount", request(func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/other" }), nil,
			forbiddenReq + `pod "default/web" does not mount a podCertificate projected volume for signer "example.com/other"`},
		{"unless the node may request that signer for the service account", request(func(s *certificatesv1.PodCertificateRequestSpec) {
			s.SignerName = "example.com/other"
		}), requesters{{"example.com:other", "web-sa"}: true}, ""},
		{"a node never changes a request", Attributes{Operation: Update, Resource: podCertificateRequests, Namespace: "default",
			Object: request(nil).Object, OldObject: request(nil).Object}, nil, forbiddenReq + "unexpected operation UPDATE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := authentication.WithUser(context.Background(), node01)
			ctx = authorization.WithRequest(ctx, tc.allowed, authorization.Attributes{})
			err := admitNodeRestriction(ctx, &tc.a, objs)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
