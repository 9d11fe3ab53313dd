package dashboard

import (
	"net/http"

	dto "github.com/prometheus/client_model/go"
)

// The components whose /metrics the numbers view charts, named as the
// series' prefix and the page's chart groups.
const (
	SchedulerComponent         = "scheduler"
	ControllerManagerComponent = "controller-manager"
)

// NewSchedulerScraper scrapes the scheduler's /metrics at url (its
// secure port, kube-scheduler's 10259; empty: not configured) for:
//
//   - scheduler_pending_pods by queue, a gauge: "pending/active",
//     "pending/backoff", "pending/unschedulable", "pending/gated": where
//     the pods wait before step 9, and why (backoff after a failed
//     attempt, unschedulable until a cluster event may help);
//   - rate(scheduler_schedule_attempts_total) summed by result, per
//     second: "attempts/scheduled", "attempts/unschedulable",
//     "attempts/error": how often step 9 ran, and how it ended. A pod
//     that does not fit shows as unschedulable attempts repeating at its
//     backoff, which the pending count alone does not show.
func NewSchedulerScraper(url string, c *http.Client, anonymous bool) *Scraper {
	return &Scraper{component: SchedulerComponent, url: url, client: c, anonymous: anonymous, read: schedulerSeries}
}

func schedulerSeries(families map[string]*dto.MetricFamily, r *rates) map[string]float64 {
	out := map[string]float64{}
	for queue, v := range sumBy(families["scheduler_pending_pods"], "queue") {
		out["pending/"+queue] = v
	}
	for result, v := range sumBy(families["scheduler_schedule_attempts_total"], "result") {
		if perSecond, ok := r.rate("attempts/"+result, v); ok {
			out["attempts/"+result] = perSecond
		}
	}
	return out
}

// chartedQueues are the controller manager's workqueues the numbers view
// charts: the two controllers of seed 000's steps 5 and 6 (a Deployment
// makes a ReplicaSet, which makes pods). Each of the other twenty queues
// is in the controller manager's /metrics, by its controller's name.
var chartedQueues = []string{"deployment", "replicaset"}

// NewControllerManagerScraper scrapes the controller manager's /metrics
// at url (its secure port, kube-controller-manager's 10257; empty: not
// configured) for each charted queue's:
//
//   - rate(workqueue_adds_total), per second: "workqueue/deployment/adds":
//     how often the controller was handed a key (each watch event of
//     what it owns adds one), which is what moves in a small cluster;
//   - workqueue_depth, a gauge: "workqueue/deployment/depth": the keys
//     waiting for a worker, the backlog; a queue drains in milliseconds,
//     so at a 15 s sample it is 0 unless the controller falls behind (a
//     burst of hundreds of pods).
func NewControllerManagerScraper(url string, c *http.Client, anonymous bool) *Scraper {
	return &Scraper{component: ControllerManagerComponent, url: url, client: c, anonymous: anonymous, read: controllerManagerSeries}
}

func controllerManagerSeries(families map[string]*dto.MetricFamily, r *rates) map[string]float64 {
	out := map[string]float64{}
	depth := sumBy(families["workqueue_depth"], "name")
	adds := sumBy(families["workqueue_adds_total"], "name")
	for _, q := range chartedQueues {
		if v, ok := depth[q]; ok {
			out["workqueue/"+q+"/depth"] = v
		}
		if v, ok := adds[q]; ok {
			if perSecond, ok := r.rate("workqueue/"+q+"/adds", v); ok {
				out["workqueue/"+q+"/adds"] = perSecond
			}
		}
	}
	return out
}
