package podcertificate

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"os"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// Manager is the kubelet's pod certificate manager (Kubernetes'
// pkg/kubelet/podcertificate), one for the fleet. For each podCertificate projected source
// of each pod (by pod uid, volume and source index) it keeps a private
// key, in memory only, and the certificate chain a signer issued for it:
//
//  1. the first time the pod's volumes are set up, it generates a key of
//     the source's keyType and creates a PodCertificateRequest, as the
//     node, for the pod, its service account and the node (each by name
//     and uid), with a stub PKCS#10 request signed by the key, owned by
//     the pod (so that deleting the pod deletes it);
//  2. until the signer answers, the volume cannot be set up ("credential
//     bundle is not issued yet"): the pod stays ContainerCreating, its
//     containers not started, as in Kubernetes;
//  3. once the request is Issued (seen on the fleet's watch of the
//     requests naming its nodes, which also syncs the pod at once), the
//     volume holds the key and chain: credentialBundlePath (key, then
//     chain), keyPath, certificateChainPath;
//  4. from status.beginRefreshAt (plus a jitter of up to 5 minutes, so
//     that pods do not all ask at once) it asks again with a new key,
//     and keeps serving the current credentials until the new ones are
//     issued; the volume resync brings them to the files;
//  5. a Denied or Failed request is final for the source: a Warning
//     event on the pod, and the volume fails with the signer's reason.
//
// A request that never shows up in the watch for 10 minutes (plus
// jitter) is taken for deleted, and asked again. Nothing is kept across
// restarts: a restarted kubelet asks again for every source.
//
//	initial ──► wait ──► fresh ──► waitRefresh ──► fresh ...
//	             │                     │
//	             └──► denied / failed ◄┘
type Manager struct {
	// get reads a request from the watch's cache (namespace, name).
	get    func(namespace, name string) (*certificatesv1.PodCertificateRequest, bool)
	clock  clock.PassiveClock
	jitter func() time.Duration // up to maxJitter
	log    *slog.Logger

	mu          sync.Mutex // guards the map, not the projections (each has its own lock)
	projections map[projectionKey]*projection
}

// projectionKey names one podCertificate source of one pod.
type projectionKey struct {
	pod    types.UID
	volume string
	source int
}

// certState is where a projection is in its life (the type's doc).
type certState int

const (
	certInitial     certState = iota // no request yet
	certWait                         // the first request is out
	certFresh                        // issued; asked again from beginRefreshAt
	certWaitRefresh                  // issued, and a new request is out
	certDenied                       // final
	certFailed                       // final
)

// projection is one source's credentials and the request out for it.
type projection struct {
	mu    sync.Mutex // held while the projection advances, a request's creation included
	state certState
	// key and chain are the credentials issued, PEM (fresh, waitRefresh).
	key, chain               []byte
	beginRefreshAt, notAfter time.Time
	// request and requestKey are the request waited for and its private
	// key (wait, waitRefresh); abandonAt is when it is taken for deleted
	// if the watch has not shown it.
	request    string
	requestKey []byte
	abandonAt  time.Time
	// reason and message are the signer's, of a denial or failure.
	reason, message string
	// The Warning events already recorded for these credentials.
	warnedOverdue, warnedExpired bool
}

// Kubernetes' timings (podcertificatemanager.go).
const (
	// assumeDeletedThreshold: a request created this long ago that the
	// watch never showed was deleted (the watch lags seconds, not minutes).
	assumeDeletedThreshold = 10 * time.Minute
	// refreshOverdue: this long after beginRefreshAt without new
	// credentials, the pod is warned.
	refreshOverdue = 10 * time.Minute
	// maxJitter spreads the requests of many pods.
	maxJitter = 5 * time.Minute
)

// errNotIssued is a volume whose certificate is still being asked for.
var errNotIssued = errors.New("credential bundle is not issued yet")

// NewManager returns a Manager reading the requests with get, from the
// fleet's watch of the requests naming its nodes.
func NewManager(get func(namespace, name string) (*certificatesv1.PodCertificateRequest, bool), clk clock.PassiveClock, log *slog.Logger) *Manager {
	return &Manager{get: get, clock: clk, log: log, projections: map[projectionKey]*projection{},
		jitter: func() time.Duration { return time.Duration(mathrand.Int64N(int64(maxJitter))) }}
}

// Files adds the files of pod's podCertificate source (volume's source
// number index) to out, its requests going as node n.
func (m *Manager) Files(ctx context.Context, n Node, pod *corev1.Pod, volume string, index int, src *corev1.PodCertificateProjection,
	mode os.FileMode, out map[string]volumemanager.File) error {
	key, chain, err := m.credentials(ctx, n, pod, volume, index, src)
	if err != nil {
		return err
	}
	certificateFiles(src, key, chain, mode, out)
	return nil
}

// certificateFiles are the paths src names: credentialBundlePath the
// key then the chain (one file a TLS library loads whole), keyPath and
// certificateChainPath each apart.
func certificateFiles(src *corev1.PodCertificateProjection, key, chain []byte, mode os.FileMode, out map[string]volumemanager.File) {
	if src.CredentialBundlePath != "" {
		out[src.CredentialBundlePath] = volumemanager.File{Data: append(append([]byte{}, key...), chain...), Mode: mode}
	}
	if src.KeyPath != "" {
		out[src.KeyPath] = volumemanager.File{Data: key, Mode: mode}
	}
	if src.CertificateChainPath != "" {
		out[src.CertificateChainPath] = volumemanager.File{Data: chain, Mode: mode}
	}
}

// credentials are the source's private key and certificate chain, PEM,
// once issued; asking for them moves the projection along (the type's
// doc). Credentials already issued are served even if asking anew fails.
func (m *Manager) credentials(ctx context.Context, n Node, pod *corev1.Pod, volume string, index int,
	src *corev1.PodCertificateProjection) (key, chain []byte, err error) {
	p := m.projection(projectionKey{pod.UID, volume, index})
	p.mu.Lock()
	defer p.mu.Unlock()
	err = m.advance(ctx, n, pod, src, p)
	switch p.state {
	case certFresh, certWaitRefresh:
		if err != nil {
			m.log.Warn("pod certificate: could not ask for new credentials; keeping the current ones", "pod", client.KeyOf(pod),
				"volume", volume, "err", err)
		}
		return p.key, p.chain, nil
	case certDenied:
		return nil, nil, fmt.Errorf("PodCertificateRequest was permanently denied: reason=%q message=%q", p.reason, p.message)
	case certFailed:
		return nil, nil, fmt.Errorf("PodCertificateRequest was permanently failed: reason=%q message=%q", p.reason, p.message)
	}
	if err != nil {
		return nil, nil, err
	}
	return nil, nil, errNotIssued
}

func (m *Manager) projection(key projectionKey) *projection {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.projections[key]
	if p == nil {
		p = &projection{}
		m.projections[key] = p
	}
	return p
}

// advance takes p one step, if it can: a request created, or the
// request out answered, or a refresh begun.
func (m *Manager) advance(ctx context.Context, n Node, pod *corev1.Pod, src *corev1.PodCertificateProjection, p *projection) error {
	now := m.clock.Now()
	log := m.log.With("pod", client.KeyOf(pod), "signer", src.SignerName)
	switch p.state {
	case certInitial:
		if err := m.request(ctx, n, pod, src, p); err != nil {
			return fmt.Errorf("while creating initial PodCertificateRequest: %w", err)
		}
		p.state = certWait
		log.Info("pod certificate: requested; the pod's containers wait for the signer", "request", p.request, "keyType", src.KeyType)
	case certFresh:
		if now.Before(p.beginRefreshAt) {
			return nil
		}
		m.warnIfLate(n, pod, p, now)
		if err := m.request(ctx, n, pod, src, p); err != nil {
			return fmt.Errorf("while creating refresh PodCertificateRequest: %w", err)
		}
		p.state = certWaitRefresh
		log.Info("pod certificate: refresh requested", "request", p.request, "beginRefreshAt", p.beginRefreshAt)
	case certWait, certWaitRefresh:
		r, ok := m.get(pod.Namespace, p.request)
		if !ok {
			if !now.After(p.abandonAt) {
				return nil // the watch lags: wait for it
			}
			// Deleted by someone: ask again (the credentials issued, if
			// any, are still good).
			gone := pod.Namespace + "/" + p.request
			p.request, p.requestKey = "", nil
			if p.state == certWait {
				p.state = certInitial
			} else {
				p.state = certFresh
			}
			return fmt.Errorf("PodCertificateRequest %q appears to have been deleted", gone)
		}
		m.answered(n, pod, r, p, now, log)
	}
	return nil
}

// answered moves p along once its request r has a terminal condition.
func (m *Manager) answered(n Node, pod *corev1.Pod, r *certificatesv1.PodCertificateRequest, p *projection, now time.Time, log *slog.Logger) {
	name := r.Namespace + "/" + r.Name
	for _, c := range r.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			state, verb := certDenied, "was denied"
			if c.Type == certificatesv1.PodCertificateRequestConditionTypeFailed {
				state, verb = certFailed, "failed"
			}
			p.state, p.reason, p.message = state, c.Reason, c.Message
			p.request, p.requestKey, p.key, p.chain = "", nil, nil, nil
			// Kubernetes' event (whose message it garbles: its Eventf
			// takes the reason as the format).
			n.warn(pod, c.Type, "PodCertificateRequest %s %s, reason=%q, message=%q", name, verb, c.Reason, c.Message)
			log.Warn("pod certificate: "+verb+" by the signer", "request", name, "reason", c.Reason, "message", c.Message)
			return
		case certificatesv1.PodCertificateRequestConditionTypeIssued:
			p.state, p.key, p.chain = certFresh, p.requestKey, cleanChain(r.Status.CertificateChain)
			p.beginRefreshAt, p.notAfter = r.Status.BeginRefreshAt.Add(m.jitter()), r.Status.NotAfter.Time
			p.request, p.requestKey, p.warnedOverdue, p.warnedExpired = "", nil, false, false
			log.Info("pod certificate: issued", "request", name, "notAfter", p.notAfter, "refreshFrom", p.beginRefreshAt)
			return
		}
	}
	if p.state == certWaitRefresh {
		m.warnIfLate(n, pod, p, now) // still pending, the current credentials ageing
	}
}

// warnIfLate records, once each, that the credentials are overdue for
// refresh (10 minutes past beginRefreshAt) or expired.
func (m *Manager) warnIfLate(n Node, pod *corev1.Pod, p *projection, now time.Time) {
	if now.After(p.beginRefreshAt.Add(refreshOverdue)) && !p.warnedOverdue {
		n.warn(pod, "CertificateOverdueForRefresh", "PodCertificate refresh overdue")
		p.warnedOverdue = true
	}
	if now.After(p.notAfter) && !p.warnedExpired {
		n.warn(pod, "CertificateExpired", "PodCertificate expired")
		p.warnedExpired = true
	}
}

// request generates a key and creates the request for it, recording both
// in p.
func (m *Manager) request(ctx context.Context, n Node, pod *corev1.Pod, src *corev1.PodCertificateProjection, p *projection) error {
	saUID, err := n.serviceAccountUID(ctx, pod.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return err
	}
	key, stub, err := generateKeyAndStub(src.KeyType)
	if err != nil {
		return fmt.Errorf("while generating keypair: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("while PEM-encoding private key: %w", err)
	}
	nodeName, nodeUID := n.nodeRef()
	created, err := n.createRequest(ctx, &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, GenerateName: "req-",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: src.SignerName,
			PodName: pod.Name, PodUID: pod.UID, ServiceAccountName: pod.Spec.ServiceAccountName, ServiceAccountUID: saUID,
			NodeName: nodeName, NodeUID: nodeUID, MaxExpirationSeconds: src.MaxExpirationSeconds,
			StubPKCS10Request: stub, UnverifiedUserAnnotations: src.UserAnnotations},
	})
	if err != nil {
		return fmt.Errorf("while creating on API: %w", err)
	}
	p.request, p.requestKey = created.Name, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	p.abandonAt = created.CreationTimestamp.Add(assumeDeletedThreshold + m.jitter())
	return nil
}

// RefreshDue: one of pod's sources is due to ask again (beginRefreshAt
// passed) or to give up on a request never seen, so the volume resync
// syncs the pod.
func (m *Manager) RefreshDue(pod *corev1.Pod) bool {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, p := range m.projections {
		if key.pod != pod.UID || !p.mu.TryLock() { // a locked one is advancing now
			continue
		}
		due := p.state == certFresh && !now.Before(p.beginRefreshAt) ||
			(p.state == certWait || p.state == certWaitRefresh) && now.After(p.abandonAt)
		p.mu.Unlock()
		if due {
			return true
		}
	}
	return false
}

// Empty: no pod has a podCertificate source, so none is due.
func (m *Manager) Empty() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.projections) == 0
}

// Forget drops a pod's credentials: the pod is gone (Kubernetes'
// ForgetPod). Its requests go with it, by their owner reference.
func (m *Manager) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.projections {
		if key.pod == uid {
			delete(m.projections, key)
		}
	}
}
