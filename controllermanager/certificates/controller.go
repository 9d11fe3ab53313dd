// Package certificates is kube-controller-manager's csrsigning
// controller: it signs, with the cluster's CA, the approved
// CertificateSigningRequests of Kubernetes' own signers
// (kubernetes.io/kube-apiserver-client, .../kube-apiserver-client-kubelet,
// kubernetes.io/kubelet-serving), and writes the certificate into
// status.certificate. A request that does not meet its signer's rules
// gets a Failed condition instead. Approving is somebody else's job
// (`kubectl certificate approve`); pending, denied and other signers'
// requests are left alone.
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller: Options (the CA, the certificates' duration), the workers, sync which signs an approved request
//	signers.go     the signers this controller is (kube-apiserver-client, kube-apiserver-client-kubelet, kubelet-serving) and each one's rules
package certificates

import (
	"context"
	"crypto"
	"crypto/x509"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// CertificateSigningRequests is the resource the controller watches.
var CertificateSigningRequests = client.Resource{GroupVersion: certificatesv1.SchemeGroupVersion, Name: "certificatesigningrequests",
	Kind: "CertificateSigningRequest", New: func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
	NewList: func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} }}

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "csrsigning"

// DefaultWorkers: kube-controller-manager runs each signer with five.
const DefaultWorkers = 5

// DefaultDuration is kube-controller-manager's
// --cluster-signing-duration: the longest a certificate it signs lives
// (a shorter spec.expirationSeconds is honoured).
const DefaultDuration = 365 * 24 * time.Hour

// Options: the CA that signs (kube-controller-manager's
// --cluster-signing-cert-file and --cluster-signing-key-file), how long
// its certificates live at most (0: DefaultDuration), and Workers.
type Options struct {
	controller.Options
	CA       *x509.Certificate
	Key      crypto.Signer
	Duration time.Duration
}

// Controller signs approved requests.
type Controller struct {
	client   *client.Client
	requests *client.Informer
	queue    *workqueue.Queue[string] // request names
	ca       authority
	workers  int
	clock    clock.PassiveClock
	log      *slog.Logger
}

// New is the controller on d's shared CertificateSigningRequest informer.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, requests: d.Informers.For(CertificateSigningRequests), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		ca: authority{cert: o.CA, key: o.Key, maxDuration: o.Duration}, workers: o.WorkersOr(DefaultWorkers),
		clock: d.Clock, log: d.Log.With("controller", ControllerName)}
	if ctrl.ca.maxDuration == 0 {
		ctrl.ca.maxDuration = DefaultDuration
	}
	enqueue := func(obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) }
	ctrl.requests.AddHandler(client.Handler{OnAdd: enqueue, OnUpdate: func(_, obj runtime.Object) { enqueue(obj) }})
	return ctrl
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "certificatesigningrequest", c.requests)
}

// sync signs one request if it is approved, not failed, not yet issued
// and for one of the signers this controller is.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok := c.requests.Cache().Get(name)
	if !ok {
		return nil // deleted: nothing to sign
	}
	r := obj.(*certificatesv1.CertificateSigningRequest)
	if len(r.Status.Certificate) > 0 || !hasTrue(r, certificatesv1.CertificateApproved) || hasTrue(r, certificatesv1.CertificateFailed) {
		return nil // not ours to do now; an approval brings it back
	}
	check, ours := signers[r.Spec.SignerName]
	if !ours {
		return nil // another signer's
	}
	req, err := parseRequest(r.Spec.Request)
	if err != nil {
		return nil // the API server validated it; nothing a retry changes
	}
	r = r.DeepCopy() // never change the cache's copy
	if err := check(req, r.Spec.Usages); err != nil {
		r.Status.Conditions = append(r.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed,
			Status: corev1.ConditionTrue, Reason: "SignerValidationFailure", Message: err.Error(), LastUpdateTime: metav1.NewTime(c.clock.Now())})
		c.log.Info("refused to sign", "csr", name, "signer", r.Spec.SignerName, "err", err)
		return c.client.UpdateStatus(ctx, CertificateSigningRequests, "", name, r, nil) // an error retries
	}
	cert, err := c.ca.sign(req, r.Spec.Usages, r.Spec.ExpirationSeconds, c.clock.Now())
	if err != nil {
		return err // retried: the CA may be readable again
	}
	r.Status.Certificate = cert
	if err := c.client.UpdateStatus(ctx, CertificateSigningRequests, "", name, r, nil); err != nil {
		return err // retried (a conflict re-reads the request)
	}
	c.log.Info("signed", "csr", name, "signer", r.Spec.SignerName, "user", r.Spec.Username)
	return nil
}

func hasTrue(r *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
