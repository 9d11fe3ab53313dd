package leaderelection

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// Kubernetes' defaults for kube-scheduler and kube-controller-manager
// (component-base's LeaderElectionConfiguration).
const (
	// DefaultLeaseDuration is how long a standby waits, after the last
	// change it saw, before it takes the Lease: the longest a cluster goes
	// without a scheduler after its leader crashes.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultRenewDeadline is how long a leader keeps acting without a
	// successful renewal. 5 s less than the lease duration: the margin in
	// which it must have stopped before anybody else may start.
	DefaultRenewDeadline = 10 * time.Second
	// DefaultRetryPeriod is how often the leader renews and a standby
	// looks: five tries fit in a renew deadline, so one slow or failed
	// request does not cost the leadership.
	DefaultRetryPeriod = 2 * time.Second
	// JitterFactor stretches a standby's waits to [1, 1.2) × RetryPeriod,
	// so that candidates started together do not knock in step.
	JitterFactor = 1.2
)

// Config is one candidate for one Lease.
type Config struct {
	// Client writes the Lease, as the component's own identity.
	Client *client.Client
	// Namespace and Name are the Lease's: kube-system/kube-scheduler.
	Namespace, Name string
	// Identity is this candidate's holderIdentity (see Identity).
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod: see the Default*
	// constants. Zero takes the default.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Clock measures every wait; nil is the real one.
	Clock clock.Clock
	// Log narrates: acquired, renewed (debug), lost, who holds it.
	Log *slog.Logger
	// Metrics records leader_election_master_status; nil records nothing.
	Metrics *Metrics
}

// withDefaults fills what is left zero and checks client-go's rule: a
// leader must give up (RenewDeadline) before the others may take over
// (LeaseDuration), and must have tried more than once by then.
func (c Config) withDefaults() (Config, error) {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Client == nil:
		return c, errors.New("leader election: no client")
	case c.Namespace == "" || c.Name == "":
		return c, errors.New("leader election: the Lease needs a namespace and a name")
	case c.Identity == "":
		return c, errors.New("leader election: the candidate has no identity")
	case c.LeaseDuration < time.Second:
		// The Lease stores whole seconds.
		return c, fmt.Errorf("leader election: lease duration %v is under a second", c.LeaseDuration)
	case c.LeaseDuration.Truncate(time.Second) <= c.RenewDeadline:
		// Compared as the Lease stores it, in whole seconds: that is
		// what the other candidates wait.
		return c, fmt.Errorf("leader election: lease duration %v must be greater than renew deadline %v", c.LeaseDuration.Truncate(time.Second), c.RenewDeadline)
	case c.RenewDeadline <= time.Duration(JitterFactor*float64(c.RetryPeriod)):
		return c, fmt.Errorf("leader election: renew deadline %v must be greater than %v × retry period %v", c.RenewDeadline, JitterFactor, c.RetryPeriod)
	case c.RetryPeriod <= 0:
		return c, fmt.Errorf("leader election: retry period %v must be positive", c.RetryPeriod)
	}
	return c, nil
}

// jittered is a standby's wait before its next try.
func (c Config) jittered() time.Duration {
	return c.RetryPeriod + time.Duration(rand.Float64()*(JitterFactor-1)*float64(c.RetryPeriod))
}
