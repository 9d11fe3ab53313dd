package authentication

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver/pki"
)

// A certificate verified once is believed from the cache, as if verified
// again: the same user, and never past its expiry.
func TestAVerifiedCertificateIsRememberedUntilItExpires(t *testing.T) {
	p, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakePassiveClock(now)
	a := New(p.CA, clk)
	a.Log = slog.New(slog.DiscardHandler)
	scheduler := cert(t, p.Dir, "scheduler")
	request := func() (string, error) {
		r := httptest.NewRequest("GET", "/api", nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{scheduler}}
		u, err := a.Authenticate(r)
		return u.Username, err
	}
	for i := range 2 {
		if user, err := request(); err != nil || user != "system:kube-scheduler" {
			t.Fatalf("request %d: %q, %v", i, user, err)
		}
	}
	if _, ok := a.verified.get(chainKey([]*x509.Certificate{scheduler}), now); !ok {
		t.Fatal("the verified certificate is not remembered")
	}
	u, _ := a.verified.get(chainKey([]*x509.Certificate{scheduler}), now)
	u.Groups = append(u.Groups[:0], "system:masters")
	if user, _ := a.verified.get(chainKey([]*x509.Certificate{scheduler}), now); user.Groups[0] == "system:masters" {
		t.Fatal("a request changed the groups the cache gives the next one")
	}
	clk.SetTime(scheduler.NotAfter.Add(time.Second))
	if _, err := request(); !apierrors.IsUnauthorized(err) {
		t.Fatalf("after the certificate expired: %v, want 401", err)
	}
}
