package leaderelection

import (
	"context"
	"flag"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// Flags are kube-scheduler's and kube-controller-manager's leader
// election flags, with Kubernetes' defaults: on, kube-system/<component>.
type Flags struct {
	LeaderElect                               bool
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	ResourceNamespace, ResourceName           string
}

// AddFlags defines the six flags on fs; resourceName is the component's
// Lease (kube-scheduler, kube-controller-manager).
func AddFlags(fs *flag.FlagSet, resourceName string) *Flags {
	f := &Flags{}
	fs.BoolVar(&f.LeaderElect, "leader-elect", true,
		"take the Lease --leader-elect-resource-namespace/--leader-elect-resource-name before doing anything, and exit when it is lost: several replicas can run, one acts (false: act at once, alone)")
	fs.DurationVar(&f.LeaseDuration, "leader-elect-lease-duration", DefaultLeaseDuration,
		"how long a standby waits, after the last renewal it saw, before it takes the Lease (whole seconds)")
	fs.DurationVar(&f.RenewDeadline, "leader-elect-renew-deadline", DefaultRenewDeadline,
		"how long the leader keeps acting without a successful renewal; less than the lease duration")
	fs.DurationVar(&f.RetryPeriod, "leader-elect-retry-period", DefaultRetryPeriod,
		"how often the leader renews and a standby tries to take the Lease")
	fs.StringVar(&f.ResourceNamespace, "leader-elect-resource-namespace", metav1.NamespaceSystem, "the Lease's namespace")
	fs.StringVar(&f.ResourceName, "leader-elect-resource-name", resourceName, "the Lease's name")
	return f
}

// Run calls lead under the leader election the flags ask for: as the
// leader once elected (Elector.Run: ErrLost when the Lease is lost), or
// at once with --leader-elect=false. c writes the Lease; metrics may be
// nil.
func (f *Flags) Run(ctx context.Context, c *client.Client, log *slog.Logger, metrics *Metrics, lead func(context.Context) error) error {
	if !f.LeaderElect {
		return lead(ctx)
	}
	id, err := Identity()
	if err != nil {
		return err
	}
	e, err := New(Config{Client: c, Namespace: f.ResourceNamespace, Name: f.ResourceName, Identity: id,
		LeaseDuration: f.LeaseDuration, RenewDeadline: f.RenewDeadline, RetryPeriod: f.RetryPeriod, Log: log, Metrics: metrics})
	if err != nil {
		return err
	}
	return e.Run(ctx, lead)
}
