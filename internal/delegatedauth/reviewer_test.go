package delegatedauth

import (
	"context"
	"errors"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeAPI answers TokenReviews ("good" is alice) and SubjectAccessReviews
// (alice may get nodes/metrics), counting the requests; down fails them.
type fakeAPI struct {
	calls int
	down  bool
}

func (f *fakeAPI) Do(_ context.Context, _, path string, body, out any) error {
	f.calls++
	if f.down {
		return errors.New("connection refused")
	}
	switch review := out.(type) {
	case *authenticationv1.TokenReview:
		if review.Spec.Token == "good" {
			review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "alice"}}
		}
	case *authorizationv1.SubjectAccessReview:
		ra := review.Spec.ResourceAttributes
		review.Status.Allowed = review.Spec.User == "alice" && ra != nil && ra.Subresource == "metrics"
	}
	return nil
}

func TestAnswersAreKeptForTheirTTLAndErrorsNever(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	api := &fakeAPI{}
	r := New(api, clk, TTLs{Token: time.Minute, Allowed: 5 * time.Minute, Denied: 30 * time.Second})
	ctx := context.Background()
	access := func(user, sub string) bool {
		spec := Spec(authenticationv1.UserInfo{Username: user})
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: sub, Name: "node01"}
		ok, _, err := r.ReviewAccess(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	steps := []struct {
		name  string
		do    func() bool
		want  bool
		calls int // the API's count after the step
	}{
		{"a good token is asked about", func() bool { _, ok, _ := r.ReviewToken(ctx, "good"); return ok }, true, 1},
		{"and then remembered", func() bool { _, ok, _ := r.ReviewToken(ctx, "good"); return ok }, true, 1},
		{"a bad token is asked about", func() bool { _, ok, _ := r.ReviewToken(ctx, "bad"); return ok }, false, 2},
		{"and its refusal remembered too", func() bool { _, ok, _ := r.ReviewToken(ctx, "bad"); return ok }, false, 2},
		{"an allowed access", func() bool { return access("alice", "metrics") }, true, 3},
		{"a denied access", func() bool { return access("alice", "proxy") }, false, 4},
		{"both remembered", func() bool { return access("alice", "metrics") && !access("alice", "proxy") }, true, 4},
		{"after 31s the denial is asked again", func() bool { clk.Step(31 * time.Second); return access("alice", "proxy") }, false, 5},
		{"the allowance still remembered", func() bool { return access("alice", "metrics") }, true, 5},
		{"after a minute the token is asked again", func() bool { clk.Step(30 * time.Second); _, ok, _ := r.ReviewToken(ctx, "good"); return ok }, true, 6},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want || api.calls != s.calls {
			t.Fatalf("%s: got %v after %d calls, want %v after %d", s.name, got, api.calls, s.want, s.calls)
		}
	}
	api.down = true
	clk.Step(10 * time.Minute)
	for range 2 {
		if _, _, err := r.ReviewToken(ctx, "good"); err == nil {
			t.Fatal("a TokenReview the API server could not answer: no error")
		}
	}
	if api.calls != 8 {
		t.Errorf("failed reviews were kept: %d calls, want 8 (each failure asks again)", api.calls)
	}
}
