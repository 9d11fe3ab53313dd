package token

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeTokenServer answers TokenRequests as the API server would, on the
// test's clock, numbering the tokens, or fails while down.
type fakeTokenServer struct {
	clock *clocktesting.FakePassiveClock
	asked []*authenticationv1.TokenRequest
	down  bool
}

func (s *fakeTokenServer) request(_ context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if s.down {
		return nil, errors.New("connection refused")
	}
	s.asked = append(s.asked, tr)
	out := tr.DeepCopy()
	out.Spec.ExpirationSeconds = nil // as a server that does not echo it
	out.Status = authenticationv1.TokenRequestStatus{Token: fmt.Sprintf("token-%d-%s/%s", len(s.asked), ns, name),
		ExpirationTimestamp: metav1.NewTime(s.clock.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))}
	return out, nil
}

func TestTheKubeletRenewsAPodsTokenAt80PercentOfItsLife(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "pod-1"},
		Spec: corev1.PodSpec{ServiceAccountName: "robot", Volumes: []corev1.Volume{{Name: "kube-api-access-abcde",
			VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}}}}}}}}}
	kubeletToken := pod.Spec.Volumes[0].Projected.Sources[0].ServiceAccountToken
	twoDays := &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](2 * 24 * 3600)}
	vault := &corev1.ServiceAccountTokenProjection{Path: "vault", Audience: "vault"}
	tests := []struct {
		name  string
		src   *corev1.ServiceAccountTokenProjection
		at    time.Duration // when the pod is synced again
		down  bool          // the API server does not answer then
		token string        // the file's content after
		err   string
	}{
		{"before 80% of its life the token is the one cached", kubeletToken, 48 * time.Minute, false, "token-1-default/robot", ""},
		{"after 80% of its life (721 s before 11:00:07) it is renewed", kubeletToken, 48*time.Minute + 10*time.Second, false, "token-2-default/robot", ""},
		{"a two-day token is renewed after a day", twoDays, 24*time.Hour + time.Second, false, "token-2-default/robot", ""},
		{"but not before", twoDays, 23 * time.Hour, false, "token-1-default/robot", ""},
		{"a projection without expirationSeconds lives an hour", vault, 47*time.Minute + 59*time.Second, false, "token-1-default/robot", ""},
		{"a renewal that fails keeps the token while it is good", kubeletToken, 55 * time.Minute, true, "token-1-default/robot", ""},
		{"an expired token is not kept", kubeletToken, 61 * time.Minute, true, "", "failed to fetch token: connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			server := &fakeTokenServer{clock: clk}
			m := &Manager{request: server.request, clock: clk, log: slog.New(slog.DiscardHandler), tokens: map[string]*authenticationv1.TokenRequest{}}
			ctx := context.Background()
			if _, err := m.PodToken(ctx, pod, tc.src); err != nil {
				t.Fatal(err)
			}
			clk.SetTime(start.Add(tc.at))
			server.down = tc.down
			token, err := m.PodToken(ctx, pod, tc.src)
			if token != tc.token || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Fatalf("got %q, %v; want %q, %q", token, err, tc.token, tc.err)
			}
			asked := server.asked[0]
			if r := asked.Spec.BoundObjectRef; r == nil || r.Kind != "Pod" || r.Name != "web" || r.UID != "pod-1" {
				t.Errorf("bound to %+v, want the pod", r)
			}
			if tc.src.Audience != "" && (len(asked.Spec.Audiences) != 1 || asked.Spec.Audiences[0] != tc.src.Audience) {
				t.Errorf("audiences %v, want %s", asked.Spec.Audiences, tc.src.Audience)
			}
		})
	}
}

func TestThePodsDueForATokenRenewalAreResynced(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	server := &fakeTokenServer{clock: clk}
	m := &Manager{request: server.request, clock: clk, log: slog.New(slog.DiscardHandler), tokens: map[string]*authenticationv1.TokenRequest{}}
	src := &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "pod-1"},
		Spec: corev1.PodSpec{ServiceAccountName: "default", Volumes: []corev1.Volume{{Name: "kube-api-access-abcde",
			VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: src}}}}}}}}
	if m.PodRenewalDue(pod) || !m.Empty() {
		t.Fatal("a pod whose token was never fetched is the pod sync's to fetch, not the resync's")
	}
	if _, err := m.PodToken(context.Background(), pod, src); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at  time.Duration
		due bool
	}{{47 * time.Minute, false}, {49 * time.Minute, true}} {
		clk.SetTime(start.Add(tc.at))
		if got := m.PodRenewalDue(pod); got != tc.due {
			t.Errorf("at +%v: due %v, want %v", tc.at, got, tc.due)
		}
	}
	clk.SetTime(start.Add(time.Hour))
	m.ForgetExpired()
	if !m.Empty() {
		t.Error("an expired token, of a pod gone, is kept")
	}
}
