package leaderelection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cgleaderelection "k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
)

// Short durations for a test in real time: a crashed leader is replaced
// in 2–2.24 s. Both libraries accept them (2 s > 1 s > 1.2 × 200 ms).
const (
	interopLease = 2 * time.Second
	interopRenew = time.Second
	interopRetry = 200 * time.Millisecond
)

// interval is one spell of leadership, by the test process's clock.
type interval struct {
	who        string
	start, end time.Time
}

// spells records when each candidate led.
type spells struct {
	mu   sync.Mutex
	all  []*interval
	open map[string]*interval
}

func (s *spells) started(who string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	iv := &interval{who: who, start: time.Now()}
	s.all = append(s.all, iv)
	s.open[who] = iv
}

// ended closes who's spell, if it is open: the first end counts.
func (s *spells) ended(who string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if iv := s.open[who]; iv != nil {
		iv.end = time.Now()
		delete(s.open, who)
	}
}

// leader is who leads now, "" for nobody.
func (s *spells) leader() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for who := range s.open {
		return who
	}
	return ""
}

// interopCandidate is one running candidate of either library, behind a
// gate of its own so that the test can cut it off.
type interopCandidate struct {
	who    string
	gate   *gate
	cancel context.CancelFunc
	done   chan struct{} // closed when its Run has returned
}

// TestNeverTwoLeadersWithClientGo runs mkube's candidate and client-go's
// (tools/leaderelection with a LeaseLock) on the same Lease of a real
// mkube API server, and takes the leader away in turn in three ways,
// twice each: stopped (it releases the Lease), crashed (cut off and
// gone at once: the Lease stays as it last renewed it) and cut off (it
// must stop by itself at its renew deadline). A fresh candidate of the
// same library replaces it each time. Every spell of leadership is
// recorded; no two may overlap.
func TestNeverTwoLeadersWithClientGo(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: about 10 s")
	}
	klog.SetLogger(logr.Discard()) // client-go's candidates log through klog: keep the test's output to its own lines
	srv := testserver.StartServer(t)
	const lease = "interop"
	rec := &spells{open: map[string]*interval{}}
	var wg sync.WaitGroup // every candidate's Run
	defer wg.Wait()
	n := 0
	kindOf := map[string]string{} // candidate → library
	start := func(kind string) *interopCandidate {
		n++
		cand := &interopCandidate{who: fmt.Sprintf("%s-%d", kind, n), gate: newGate(t, srv.URL), done: make(chan struct{})}
		kindOf[cand.who] = kind
		ctx, cancel := context.WithCancel(context.Background())
		cand.cancel = cancel
		t.Cleanup(cancel)
		wg.Add(1)
		switch kind {
		case "mkube":
			e, err := New(Config{Client: client.New(cand.gate.URL, cand.who), Namespace: metav1.NamespaceSystem, Name: lease,
				Identity: cand.who, LeaseDuration: interopLease, RenewDeadline: interopRenew, RetryPeriod: interopRetry,
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				defer wg.Done()
				defer close(cand.done)
				e.Run(ctx, func(ctx context.Context) error {
					rec.started(cand.who)
					<-ctx.Done()
					rec.ended(cand.who)
					return nil
				})
			}()
		case "client-go":
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: cand.gate.URL, QPS: -1})
			if err != nil {
				t.Fatal(err)
			}
			lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: lease},
				Client: cs.CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: cand.who}}
			el, err := cgleaderelection.NewLeaderElector(cgleaderelection.LeaderElectionConfig{Lock: lock,
				LeaseDuration: interopLease, RenewDeadline: interopRenew, RetryPeriod: interopRetry, ReleaseOnCancel: true, Name: lease,
				Callbacks: cgleaderelection.LeaderCallbacks{
					OnStartedLeading: func(ctx context.Context) {
						rec.started(cand.who)
						<-ctx.Done()
						rec.ended(cand.who)
					},
					OnStoppedLeading: func() { rec.ended(cand.who) },
				}})
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				defer wg.Done()
				defer close(cand.done)
				el.Run(ctx)
			}()
		}
		return cand
	}

	candidates := map[string]*interopCandidate{}
	for _, kind := range []string{"mkube", "client-go"} {
		c := start(kind)
		candidates[c.who] = c
	}
	waitLeader := func(what string, not string) string {
		var who string
		testserver.Eventually(t, what, func() (bool, string) {
			who = rec.leader()
			return who != "" && who != not, "leader: " + who
		})
		return who
	}
	leader := waitLeader("one of the two leads", "")
	for round, how := range []string{"stopped", "crashed", "cut off", "stopped", "crashed", "cut off"} {
		c := candidates[leader]
		switch how {
		case "stopped":
			// client-go releases the Lease before it cancels the
			// context it gave OnStartedLeading: its user must stop its
			// work when told to stop, as a component's signal handler
			// does. So the spell ends here, when the stop is asked.
			rec.ended(c.who)
			c.cancel()
		case "crashed":
			c.gate.mode.Store(gate503)
			rec.ended(c.who)
			c.cancel()
		case "cut off":
			c.gate.mode.Store(gate503)
			testserver.Eventually(t, c.who+" stops leading by itself", func() (bool, string) {
				return rec.leader() != c.who, "still leading"
			})
			c.cancel()
		}
		<-c.done
		delete(candidates, c.who)
		began := time.Now()
		next := waitLeader("the standby takes over", c.who)
		t.Logf("round %d: %s %s; %s leads after %v", round+1, c.who, how, next, time.Since(began).Round(time.Millisecond))
		r := start(kindOf[c.who])
		candidates[r.who] = r
		leader = next
	}
	for _, c := range candidates {
		c.cancel()
		<-c.done
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	all := slices.Clone(rec.all)
	slices.SortFunc(all, func(a, b *interval) int { return a.start.Compare(b.start) })
	led := map[string]int{}
	gaps := []time.Duration{} // between one spell's end and the next's start
	for i, iv := range all {
		led[kindOf[iv.who]]++
		if iv.end.IsZero() {
			t.Errorf("%s's spell never ended", iv.who)
		}
		if i > 0 && iv.start.Before(all[i-1].end) {
			t.Errorf("%s began leading %v before %s stopped", iv.who, all[i-1].end.Sub(iv.start), all[i-1].who)
		}
		if i > 0 {
			gaps = append(gaps, iv.start.Sub(all[i-1].end).Round(time.Millisecond))
		}
	}
	if led["mkube"] < 3 || led["client-go"] < 3 {
		t.Errorf("spells by library %v: want each to have led at least 3 times", led)
	}
	t.Logf("%d spells of leadership, none overlapping: %v; gaps between them %v", len(all), led, gaps)
}
