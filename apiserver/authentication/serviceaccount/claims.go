package serviceaccount

import (
	"fmt"
	"time"

	"gopkg.in/go-jose/go-jose.v2/jwt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	kubesa "k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// privateClaims are the token's "kubernetes.io" claims, as kube-apiserver
// writes them: whose token it is and what it is bound to.
type privateClaims struct {
	Kubernetes kubernetesClaims `json:"kubernetes.io,omitempty"`
}

type kubernetesClaims struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount ref    `json:"serviceaccount,omitempty"`
	Pod            *ref   `json:"pod,omitempty"`
	Secret         *ref   `json:"secret,omitempty"`
	// Node is the node a pod-bound token's pod runs on (for the Node
	// authorizer and for audit), or what a node-bound token is bound to.
	Node *ref `json:"node,omitempty"`
	// WarnAfter, on a kubelet's token whose life the API server extended
	// to a year, is when its requested life ended: still accepted after,
	// but annotated as stale in the audit log, so that a client that
	// never reloads its token file shows up before the extension ends.
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

type ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Request is a token to issue.
type Request struct {
	ServiceAccount *corev1.ServiceAccount
	// At most one of Pod and Secret (and Node alone) binds the token: it
	// is good only while that object exists with that UID. A pod-bound
	// token also names the pod's Node, whose UID may be unknown.
	Pod    *corev1.Pod
	Secret *corev1.Secret
	Node   *corev1.Node
	// Audiences the token is for.
	Audiences []string
	// ExpirationSeconds is the token's life; WarnAfterSeconds, if not 0,
	// when it is stale (see WarnAfter).
	ExpirationSeconds, WarnAfterSeconds int64
}

// Issued is a signed token: the JWT, its jti and when it was made.
type Issued struct {
	Token    string
	ID       string
	IssuedAt time.Time
}

// Issue signs a token for req, with kube-apiserver's claims.
func (t *Tokens) Issue(req Request) (Issued, error) {
	if req.Secret != nil && (req.Pod != nil || req.Node != nil) {
		return Issued{}, fmt.Errorf("internal error, token can only be bound to one object type")
	}
	sa := req.ServiceAccount
	now := t.clock.Now()
	public := jwt.Claims{
		Issuer:    t.issuer,
		Subject:   kubesa.MakeUsername(sa.Namespace, sa.Name),
		Audience:  jwt.Audience(req.Audiences),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(time.Duration(req.ExpirationSeconds) * time.Second)),
		ID:        string(uuid.NewUUID()),
	}
	private := privateClaims{Kubernetes: kubernetesClaims{Namespace: sa.Namespace,
		ServiceAccount: ref{Name: sa.Name, UID: string(sa.UID)}}}
	k := &private.Kubernetes
	switch {
	case req.Pod != nil:
		k.Pod = &ref{Name: req.Pod.Name, UID: string(req.Pod.UID)}
		if req.Node != nil {
			k.Node = &ref{Name: req.Node.Name, UID: string(req.Node.UID)}
		}
	case req.Secret != nil:
		k.Secret = &ref{Name: req.Secret.Name, UID: string(req.Secret.UID)}
	case req.Node != nil:
		k.Node = &ref{Name: req.Node.Name, UID: string(req.Node.UID)}
	}
	if req.WarnAfterSeconds != 0 {
		k.WarnAfter = jwt.NewNumericDate(now.Add(time.Duration(req.WarnAfterSeconds) * time.Second))
	}
	token, err := jwt.Signed(t.signer).Claims(private).Claims(public).CompactSerialize()
	if err != nil {
		return Issued{}, fmt.Errorf("failed to generate token: %w", err)
	}
	return Issued{Token: token, ID: public.ID, IssuedAt: now}, nil
}
