package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/client"
)

// ErrLost is what Run returns, wrapped with the reason, when this
// candidate led and then lost the Lease: it could not renew within the
// renew deadline, or found another holder. The component must stop
// acting at once; Kubernetes' components exit.
var ErrLost = errors.New("leader election lost")

// Elector is one candidate for one Lease. Run blocks; IsLeader may be
// called from any goroutine.
type Elector struct {
	cfg  Config
	name string // namespace/name of the Lease, for the log

	// Owned by Run's goroutine (a renewal runs on a goroutine of its own,
	// but Run waits for it before it reads these again):
	//   lease   the Lease as last read or written: the next write names
	//           its resourceVersion;
	//   seenAt  when, by our clock, we saw its spec change last: the
	//           start of the LeaseDuration a candidate waits.
	//   renewedAt  when our last successful write started: the leader
	//           acts until renewedAt + RenewDeadline.
	lease     *coordinationv1.Lease
	seenAt    time.Time
	renewedAt time.Time

	leading atomic.Bool
}

// New checks cfg (see Config) and returns its candidate.
func New(cfg Config) (*Elector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Elector{cfg: cfg, name: cfg.Namespace + "/" + cfg.Name}, nil
}

// IsLeader reports whether this candidate leads now.
func (e *Elector) IsLeader() bool { return e.leading.Load() }

// Run campaigns for the Lease until ctx ends:
//
//  1. acquire: try at once, then every RetryPeriod (jittered), until the
//     Lease is free, expired or created by us;
//  2. lead: call lead on a goroutine of its own with a context that ends
//     when the leadership does, and renew the Lease every RetryPeriod;
//  3. stop: when ctx ends or lead returns, wait for lead to return, then
//     release the Lease (holder "") so that a standby takes over within
//     a retry period rather than a lease duration.
//
// It returns nil when ctx ended (before leading, or after the Lease was
// released), lead's error if lead returned on its own, and ErrLost when
// the leadership was lost: lead's context has ended by then, and Run does
// not wait for lead to return, since the caller must stop now.
func (e *Elector) Run(ctx context.Context, lead func(context.Context) error) error {
	e.cfg.Metrics.set(e.cfg.Name, false)
	e.cfg.Log.Info("campaigning for the Lease", "lease", e.name, "identity", e.cfg.Identity,
		"leaseDuration", e.cfg.LeaseDuration, "renewDeadline", e.cfg.RenewDeadline, "retryPeriod", e.cfg.RetryPeriod)
	if !e.acquire(ctx) {
		return nil
	}
	leadCtx, stopLeading := context.WithCancel(ctx)
	defer stopLeading()
	leadDone := make(chan struct{}) // closed by the lead goroutine when lead returns
	var leadErr error
	go func() {
		defer close(leadDone)
		leadErr = lead(leadCtx)
	}()
	if err := e.keepLeading(ctx, leadDone); err != nil {
		stopLeading()
		e.setLeading(false)
		e.cfg.Log.Error("lost the Lease: stopping", "lease", e.name, "err", err)
		return err
	}
	stopLeading()
	<-leadDone
	e.setLeading(false)
	e.release()
	return leadErr
}

// acquire tries at once and then every jittered RetryPeriod until the
// Lease is ours (true) or ctx ends (false).
func (e *Elector) acquire(ctx context.Context) bool {
	for ctx.Err() == nil {
		if e.try(ctx) == ours {
			e.setLeading(true)
			return true
		}
		select {
		case <-ctx.Done():
		case <-e.cfg.Clock.After(e.cfg.jittered()):
		}
	}
	return false
}

// keepLeading renews the Lease every RetryPeriod until ctx ends or
// leadDone closes (nil), or until the leadership is lost (ErrLost). A
// renewal that fails is retried at the next period; the deadline timer
// ends the leadership RenewDeadline after the start of the last renewal
// that succeeded, even while a request still hangs.
func (e *Elector) keepLeading(ctx context.Context, leadDone <-chan struct{}) error {
	deadline := e.cfg.Clock.NewTimer(e.cfg.RenewDeadline - e.cfg.Clock.Since(e.renewedAt))
	defer func() { deadline.Stop() }()
	lost := func() error {
		return fmt.Errorf("%w: no renewal of %s succeeded within the renew deadline (%v)", ErrLost, e.name, e.cfg.RenewDeadline)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-leadDone:
			return nil
		case <-deadline.C():
			return lost()
		case <-e.cfg.Clock.After(e.cfg.RetryPeriod):
		}
		reqCtx, cancel := context.WithCancel(ctx)
		result := make(chan outcome, 1) // sent once by the renewal goroutine
		go func() { result <- e.try(reqCtx) }()
		select {
		case r := <-result:
			cancel()
			switch r {
			case ours:
				deadline.Stop()
				deadline = e.cfg.Clock.NewTimer(e.cfg.RenewDeadline - e.cfg.Clock.Since(e.renewedAt))
				e.cfg.Log.Debug("renewed the Lease", "lease", e.name, "renewTime", e.renewedAt.Format(time.RFC3339Nano))
			case heldByOther:
				return fmt.Errorf("%w: %s holds %s now", ErrLost, holderOf(e.lease), e.name)
			case failed:
				e.cfg.Log.Warn("could not renew the Lease; still leading until the renew deadline", "lease", e.name,
					"stopsIn", (e.cfg.RenewDeadline - e.cfg.Clock.Since(e.renewedAt)).Round(time.Millisecond))
			}
		case <-deadline.C():
			cancel()
			<-result
			return lost()
		case <-ctx.Done():
			cancel()
			<-result
			return nil
		case <-leadDone:
			cancel()
			<-result
			return nil
		}
	}
}

// outcome is what one try found.
type outcome int

const (
	// failed: no answer, or another candidate wrote first (409
	// Conflict); try again at the next period.
	failed outcome = iota
	// heldByOther: another candidate holds the Lease and it has not
	// expired by our clock.
	heldByOther
	// ours: the Lease is ours, just created, taken over or renewed.
	ours
)

// try is one round of optimistic concurrency on the Lease:
//
//  1. the leader first writes its renewal on the version it wrote last,
//     without reading: one request while nobody else writes (client-go's
//     fast path); if that fails, it reads like anybody else;
//  2. read the Lease; none yet: create it, held by us, and whoever
//     creates it first wins (the others get 409 AlreadyExists);
//  3. if another candidate holds it and we have not seen it unchanged
//     for its leaseDurationSeconds yet, it is theirs: stop here;
//  4. otherwise write it as ours, naming the resourceVersion we read:
//     if somebody wrote in between, the API server refuses (409
//     Conflict) and nothing is decided until the next try.
func (e *Elector) try(ctx context.Context) outcome {
	c := e.cfg.Client
	now := e.cfg.Clock.Now()
	if e.leading.Load() && e.lease != nil {
		if e.write(ctx, claimed(e.lease, e.cfg.Identity, e.cfg.LeaseDuration, now), now) == nil {
			return ours
		}
	}
	cur := &coordinationv1.Lease{}
	err := c.Get(ctx, client.Leases, e.cfg.Namespace, e.cfg.Name, cur)
	if apierrors.IsNotFound(err) {
		lease := newLease(e.cfg.Namespace, e.cfg.Name, e.cfg.Identity, e.cfg.LeaseDuration, now)
		if err := c.Create(ctx, client.Leases, e.cfg.Namespace, lease, lease); err != nil {
			e.cfg.Log.Debug("could not create the Lease", "lease", e.name, "err", err)
			return failed
		}
		e.see(lease, now)
		e.renewedAt = now
		e.cfg.Log.Info("acquired the Lease: leading", "lease", e.name, "identity", e.cfg.Identity, "created", true)
		return ours
	}
	if err != nil {
		e.cfg.Log.Debug("could not read the Lease", "lease", e.name, "err", err)
		return failed
	}
	e.see(cur, now)
	holder := holderOf(cur)
	if holder != "" && holder != e.cfg.Identity {
		if expires := e.seenAt.Add(durationOf(cur, e.cfg.LeaseDuration)); now.Before(expires) {
			return heldByOther
		}
	}
	unrenewedFor := now.Sub(e.seenAt) // before our write moves seenAt
	if err := e.write(ctx, claimed(cur, e.cfg.Identity, e.cfg.LeaseDuration, now), now); err != nil {
		return failed
	}
	if holder != e.cfg.Identity {
		args := []any{"lease", e.name, "identity", e.cfg.Identity, "leaseTransitions", *e.lease.Spec.LeaseTransitions}
		if holder != "" {
			// It went unrenewed for a whole lease duration: its holder
			// is dead, frozen or cut off.
			args = append(args, "previousHolder", holder, "unrenewedFor", unrenewedFor.Round(time.Millisecond))
		}
		e.cfg.Log.Info("acquired the Lease: leading", args...)
	}
	return ours
}

// write updates the Lease to next (which names the resourceVersion it
// was made from) and keeps what the server stored.
func (e *Elector) write(ctx context.Context, next *coordinationv1.Lease, now time.Time) error {
	out := &coordinationv1.Lease{}
	if err := e.cfg.Client.Update(ctx, client.Leases, e.cfg.Namespace, e.cfg.Name, next, out); err != nil {
		e.cfg.Log.Debug("could not write the Lease", "lease", e.name, "err", err)
		return err
	}
	e.see(out, now)
	e.renewedAt = now
	return nil
}

// see records lease as the latest we know. If its spec changed since the
// last we saw, the LeaseDuration we must wait starts again now; the log
// names a new holder once, as client-go's "new leader elected".
func (e *Elector) see(lease *coordinationv1.Lease, now time.Time) {
	if e.lease == nil || !equality.Semantic.DeepEqual(e.lease.Spec, lease.Spec) {
		e.seenAt = now
	}
	if h := holderOf(lease); (e.lease == nil || holderOf(e.lease) != h) && h != e.cfg.Identity {
		if h == "" {
			e.cfg.Log.Info("the Lease is free", "lease", e.name)
		} else {
			e.cfg.Log.Info("the Lease is held by another candidate: standing by", "lease", e.name, "holder", h,
				"leaseDuration", durationOf(lease, e.cfg.LeaseDuration))
		}
	}
	e.lease = lease
}

// release gives the Lease up, if it is still ours: a standby then takes
// it at its next try. A conflict means our last renewal landed although
// we did not hear so, or somebody else wrote: read, and release what we
// read if it is still ours.
func (e *Elector) release() {
	if e.lease == nil || holderOf(e.lease) != e.cfg.Identity {
		return
	}
	// Bounded by the renew deadline, as client-go's: the process is
	// stopping and must not hang on an API server that is gone.
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	c := e.cfg.Client
	err := c.Update(ctx, client.Leases, e.cfg.Namespace, e.cfg.Name, released(e.lease, e.cfg.Clock.Now()), nil)
	if apierrors.IsConflict(err) {
		cur := &coordinationv1.Lease{}
		if err = c.Get(ctx, client.Leases, e.cfg.Namespace, e.cfg.Name, cur); err == nil {
			if holderOf(cur) != e.cfg.Identity {
				e.cfg.Log.Info("did not release the Lease: another candidate holds it", "lease", e.name, "holder", holderOf(cur))
				return
			}
			err = c.Update(ctx, client.Leases, e.cfg.Namespace, e.cfg.Name, released(cur, e.cfg.Clock.Now()), nil)
		}
	}
	if err != nil {
		e.cfg.Log.Warn("could not release the Lease: the others wait for it to expire", "lease", e.name, "err", err)
		return
	}
	e.cfg.Log.Info("released the Lease", "lease", e.name, "identity", e.cfg.Identity)
}

// setLeading records the leadership for IsLeader and the metric.
func (e *Elector) setLeading(leading bool) {
	e.leading.Store(leading)
	e.cfg.Metrics.set(e.cfg.Name, leading)
}
