// Package leaderelection lets several copies of one component (two
// schedulers, three controller managers) agree that exactly one of them
// acts, as client-go's tools/leaderelection does for kube-scheduler and
// kube-controller-manager. The others stand by, and one of them takes
// over when the leader dies.
//
// The algorithm in one sentence: the candidates share one
// coordination.k8s.io/v1 Lease (kube-system/kube-scheduler), the leader
// rewrites spec.renewTime every RetryPeriod, and a candidate takes the
// Lease only after it has seen it unchanged for a whole
// spec.leaseDurationSeconds; every write names the resourceVersion it
// read, so of two candidates that write at once the API server (and etcd
// under it) accepts one and answers the other 409 Conflict.
//
// That is optimistic concurrency, the API server's only lock: nobody
// holds anything while deciding; the write carries what it was decided
// on, and is refused if that changed. The Lease's fields, as Kubernetes
// writes them:
//
//	holderIdentity        who leads: "<hostname>_<uuid>", "" once released
//	leaseDurationSeconds  how long the others wait after the last change they saw (15)
//	acquireTime           when the holder took it (MicroTime)
//	renewTime             the holder's last renewal (MicroTime)
//	leaseTransitions      how many times it changed hands
//
// Guarantees, and what they rest on:
//   - Two candidates never both lead, provided their clocks run at about
//     the same rate (not that they agree: nobody compares renewTime with
//     its own clock; a candidate measures LeaseDuration from the moment
//     it saw the Lease change, on its own clock). The leader stops acting
//     RenewDeadline (10 s) after the start of its last successful renewal
//     if it cannot renew again; a candidate saw that renewal no earlier
//     than its start, so it waits at least LeaseDuration (15 s) after it.
//     The 5 s between is the leader's time to stop.
//   - Nothing fences the old leader's writes: a request it sent before it
//     stopped may still land afterwards. That is why the components exit
//     on losing the Lease, as Kubernetes' do.
//   - A free Lease (none yet, or released: holderIdentity "") is taken at
//     the first try, so a cluster's first start does not wait; a Lease
//     whose holder crashed is taken LeaseDuration after the candidate
//     first saw it (15–17.4 s with the retry period's jitter); one whose
//     holder stopped cleanly and released it, within a retry period.
//
// Where things live:
//
//	file         what it holds
//	config.go    Config, Kubernetes' default durations and the rule LeaseDuration > RenewDeadline > 1.2 × RetryPeriod; the retry jitter
//	identity.go  Identity: "<hostname>_<uuid>", as kube-scheduler names its candidates
//	lease.go     reading and writing the Lease's fields: who holds it, claiming, renewing and releasing it
//	elector.go   Elector: Run (acquire, lead while renewing, release on stop, ErrLost), and the one try that reads and writes the Lease
//	flags.go     Flags: --leader-elect and its five companions, as kube-scheduler and kube-controller-manager spell them
//	metrics.go   Metrics: leader_election_master_status{name}, 1 while leading
package leaderelection
