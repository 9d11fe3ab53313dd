package leaderelection

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
)

// gate stands between a candidate and the API server, so a test can cut
// it off: a network that answers 503, or one where requests hang until
// their client gives up.
type gate struct {
	*httptest.Server
	mode     atomic.Int32  // gateOpen, gate503 or gateHang
	inflight atomic.Int32  // requests held by gateHang
	closing  chan struct{} // closed when the test ends: held requests return
}

const (
	gateOpen int32 = iota
	gate503
	gateHang
)

func newGate(t *testing.T, target string) *gate {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // requests the candidates cancel are expected
	g := &gate{closing: make(chan struct{})}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch g.mode.Load() {
		case gate503:
			http.Error(w, "cut off", http.StatusServiceUnavailable)
		case gateHang:
			g.inflight.Add(1)
			defer g.inflight.Add(-1)
			select {
			case <-r.Context().Done():
			case <-g.closing:
			}
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() { close(g.closing); g.Close() })
	return g
}

// leader runs e in the background and reports when its lead function
// starts and when its context ends, by the fake clock.
type leader struct {
	started, stopped chan time.Time
	done             chan struct{} // closed when Run has returned err
	err              error
}

func runLeader(t *testing.T, e *Elector, clk *clocktesting.FakeClock) (*leader, context.CancelFunc) {
	l := &leader{started: make(chan time.Time, 1), stopped: make(chan time.Time, 1), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(l.done)
		l.err = e.Run(ctx, func(ctx context.Context) error {
			l.started <- clk.Now()
			<-ctx.Done()
			l.stopped <- clk.Now()
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-l.done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return l, cancel
}

// waitFor polls cond (real time, with a deadline): the elector's
// goroutine reaching the state a test steps the clock from.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testserver.Eventually(t, what, func() (bool, string) { return cond(), "not yet" })
}

// TestLeaderStopsBeforeTheLeaseCanBeTaken cuts the leader off from the API
// server and moves one fake clock for both candidates: the leader's lead
// context must end RenewDeadline after the start of its last successful
// renewal, and the standby must not take the Lease before LeaseDuration
// after it saw that renewal, later still.
func TestLeaderStopsBeforeTheLeaseCanBeTaken(t *testing.T) {
	srv := testserver.StartServer(t)
	direct := client.New(srv.URL, "leaderelection-test")
	for _, tt := range []struct {
		name string
		cut  int32
	}{
		{"the API server answers 503", gate503},
		{"requests to the API server hang", gateHang},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "cut-" + map[int32]string{gate503: "503", gateHang: "hang"}[tt.cut]
			g := newGate(t, srv.URL)
			clk := clocktesting.NewFakeClock(t0)
			a := newCandidate(t, client.New(g.URL, "leader"), name, "leader", clk)
			b := newCandidate(t, direct, name, "standby", clk)
			l, _ := runLeader(t, a, clk)
			if got := <-l.started; !got.Equal(t0) {
				t.Fatalf("led from %v, want at once (%v): the Lease was free", got, t0)
			}
			// Leading and waiting: the deadline timer and the retry wait.
			waitFor(t, "the leader waits to renew", func() bool { return clk.Waiters() == 2 })
			if got := b.try(context.Background()); got != heldByOther {
				t.Fatalf("standby's try: %v, want held by another", got)
			}
			clk.Step(DefaultRetryPeriod) // the leader renews at t0+2s
			waitFor(t, "the leader renews", func() bool {
				return clk.Waiters() == 2 && getLease(t, direct, name).Spec.RenewTime.Time.Equal(t0.Add(2*time.Second))
			})
			lastRenewal := clk.Now()
			if got := b.try(context.Background()); got != heldByOther {
				t.Fatalf("standby's try: %v, want held by another", got)
			}

			g.mode.Store(tt.cut)
			var stoppedAt, takenAt time.Time
			// Half a second at a time, up to t0+20s: at each step the
			// leader acts, then the standby tries.
			for clk.Now().Before(t0.Add(20 * time.Second)) {
				clk.Step(500 * time.Millisecond)
				if stoppedAt.IsZero() {
					select {
					case stoppedAt = <-l.stopped:
					default:
						if !clk.Now().Before(lastRenewal.Add(DefaultRenewDeadline)) {
							select {
							case stoppedAt = <-l.stopped:
							case <-time.After(5 * time.Second):
								t.Fatalf("at %v the leader still leads, %v after its last renewal", clk.Now(), clk.Since(lastRenewal))
							}
						} else {
							// It acted on this step: it waits for the
							// next retry (the deadline timer and the
							// retry wait), or for a request that hangs
							// (the deadline timer alone).
							waitFor(t, "the leader settles", func() bool {
								w, held := clk.Waiters(), g.inflight.Load()
								return (w == 2 && held == 0) || (w == 1 && held == 1)
							})
						}
					}
				}
				if takenAt.IsZero() && b.try(context.Background()) == ours {
					takenAt = clk.Now()
				}
			}
			if want := lastRenewal.Add(DefaultRenewDeadline); !stoppedAt.Equal(want) {
				t.Errorf("the leader stopped at t0+%v, want t0+%v (last renewal + renew deadline)", stoppedAt.Sub(t0), want.Sub(t0))
			}
			if want := lastRenewal.Add(DefaultLeaseDuration); !takenAt.Equal(want) {
				t.Errorf("the standby took over at t0+%v, want t0+%v (when it saw the last renewal + lease duration)", takenAt.Sub(t0), want.Sub(t0))
			}
			<-l.done
			if !errors.Is(l.err, ErrLost) {
				t.Errorf("Run returned %v, want ErrLost", l.err)
			}
			if a.IsLeader() {
				t.Error("the old leader still says it leads")
			}
		})
	}
}

// TestRunStops: a leader that stops gives the Lease up only once its work
// has returned, and a standby takes it at its next try, not a lease
// duration later.
func TestRunStops(t *testing.T) {
	srv := testserver.StartServer(t)
	c := client.New(srv.URL, "leaderelection-test")
	leadErr := errors.New("the scheduler failed")
	for _, tt := range []struct {
		name    string
		byLead  bool // lead returns on its own, with leadErr; else ctx is cancelled
		wantErr error
	}{
		{"the process is told to stop", false, nil},
		{"the work returns an error while leading", true, leadErr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "stop"
			if tt.byLead {
				name = "stop-by-lead"
			}
			clk := clocktesting.NewFakeClock(t0)
			a := newCandidate(t, c, name, "leader", clk)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := make(chan struct{})
			var holderWhenLeadReturned string
			errc := make(chan error, 1)
			go func() {
				errc <- a.Run(ctx, func(ctx context.Context) error {
					select {
					case <-ctx.Done():
					case <-stop:
					}
					holderWhenLeadReturned = holderOf(getLease(t, c, name))
					if tt.byLead {
						return leadErr
					}
					return nil
				})
			}()
			waitFor(t, "the leader leads", a.IsLeader)
			clk.Step(DefaultRetryPeriod)
			waitFor(t, "the leader renews", func() bool {
				return getLease(t, c, name).Spec.RenewTime.Time.Equal(t0.Add(DefaultRetryPeriod))
			})
			if tt.byLead {
				close(stop)
			} else {
				cancel()
			}
			if err := <-errc; err != tt.wantErr {
				t.Fatalf("Run returned %v, want %v", err, tt.wantErr)
			}
			if holderWhenLeadReturned != "leader" {
				t.Errorf("when the work returned the Lease was held by %q: released before the work stopped", holderWhenLeadReturned)
			}
			l := getLease(t, c, name)
			if holderOf(l) != "" || ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 1 || ptr.Deref(l.Spec.LeaseTransitions, -1) != 0 {
				t.Errorf("released Lease: holder %q, leaseDurationSeconds %d, leaseTransitions %d; want \"\", 1, 0",
					holderOf(l), ptr.Deref(l.Spec.LeaseDurationSeconds, 0), ptr.Deref(l.Spec.LeaseTransitions, -1))
			}
			b := newCandidate(t, c, name, "standby", clocktesting.NewFakeClock(t0.Add(time.Hour)))
			if got := b.try(context.Background()); got != ours {
				t.Fatalf("the standby's first try after the release: %v, want ours", got)
			}
			if l := getLease(t, c, name); ptr.Deref(l.Spec.LeaseTransitions, -1) != 1 {
				t.Errorf("leaseTransitions %d after the hand-over, want 1", ptr.Deref(l.Spec.LeaseTransitions, -1))
			}
		})
	}
}

// TestLeaderFindsAnotherHolder: a leader whose Lease somebody else took
// (it was frozen past its lease, say) stops at its next renewal, and does
// not release what is no longer its own.
func TestLeaderFindsAnotherHolder(t *testing.T) {
	srv := testserver.StartServer(t)
	c := client.New(srv.URL, "leaderelection-test")
	clk := clocktesting.NewFakeClock(t0)
	a := newCandidate(t, c, "usurped", "leader", clk)
	l, _ := runLeader(t, a, clk)
	<-l.started
	waitFor(t, "the leader waits to renew", func() bool { return clk.Waiters() == 2 })
	lease := getLease(t, c, "usurped")
	lease.Spec.HolderIdentity = ptr.To("usurper")
	if err := c.Update(context.Background(), client.Leases, metav1.NamespaceSystem, "usurped", lease, nil); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultRetryPeriod)
	if got := <-l.stopped; !got.Equal(t0.Add(DefaultRetryPeriod)) {
		t.Errorf("stopped at t0+%v, want at the next renewal, t0+%v", got.Sub(t0), DefaultRetryPeriod)
	}
	<-l.done
	if !errors.Is(l.err, ErrLost) {
		t.Errorf("Run returned %v, want ErrLost", l.err)
	}
	if h := holderOf(getLease(t, c, "usurped")); h != "usurper" {
		t.Errorf("holder %q after the leader stopped, want the usurper's", h)
	}
}
