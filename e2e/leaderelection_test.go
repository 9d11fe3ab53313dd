package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// shortLease are the leader election flags of the failover tests: a
// crashed leader is replaced in 3–3.6 s instead of Kubernetes' 15–17.4 s.
var shortLease = []string{"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "500ms"}

// leaseHolder is the holderIdentity of kube-system/NAME.
func (c *cluster) leaseHolder(name string) string {
	var lease struct {
		Spec struct{ HolderIdentity string }
	}
	c.do("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"+name, "", nil, &lease)
	return lease.Spec.HolderIdentity
}

// identityOf is the holderIdentity the process name campaigns as, from
// its log ("campaigning for the Lease ... identity=host_uuid").
func (c *cluster) identityOf(name string) string {
	data, _ := os.ReadFile(c.logs[name])
	m := regexp.MustCompile(`msg="campaigning for the Lease" .*identity=(\S+)`).FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// leaderOf waits until one of names holds the Lease and returns it.
func (c *cluster) leaderOf(t *testing.T, lease string, names ...string) string {
	t.Helper()
	var leader string
	testserver.EventuallyWithin(t, 30*time.Second, "one of "+strings.Join(names, ", ")+" holds "+lease, func() (bool, string) {
		holder := c.leaseHolder(lease)
		for _, n := range names {
			if id := c.identityOf(n); id != "" && id == holder {
				leader = n
				return true, ""
			}
		}
		return false, "holder " + holder
	})
	return leader
}

// firstLogTime is the time of name's first log line with msg, zero if
// none.
func (c *cluster) firstLogTime(name, msg string) time.Time {
	data, _ := os.ReadFile(c.logs[name])
	for line := range strings.SplitSeq(string(data), "\n") {
		if !strings.Contains(line, `msg="`+msg+`"`) {
			continue
		}
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "time=") {
			if at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(f[0], "time=")); err == nil {
				return at
			}
		}
	}
	return time.Time{}
}

// TestSchedulerFailover runs two schedulers and two controller managers
// against one cluster, with short leases. Only the Leases' holders act;
// `kubectl get leases -n kube-system` names them. Then, while pods are
// being created, the leading scheduler is killed (-9: no release), and
// the standby must take the Lease and bind every pod; a fresh standby is
// started each time, for MKUBE_FAILOVER_TRIALS trials (3). The same for
// the controller manager while a ReplicaSet is scaled. Each failover time
// (killed → first bind by the new leader; killed → the ReplicaSet's
// count reached) is logged.
func TestSchedulerFailover(t *testing.T) {
	trials := 3
	if n, err := strconv.Atoi(os.Getenv("MKUBE_FAILOVER_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	c := startClusterWith(t, clusterFlags{scheduler: shortLease, controllerManager: shortLease},
		// Room for every trial's pods: 125 each.
		kubeletNode{name: "node01", flags: []string{"--pods", "1000"}}, kubeletNode{name: "node02", flags: []string{"--pods", "1000"}})
	c.startAs("scheduler-b", "scheduler", append(c.serverFlags("scheduler"), shortLease...)...)
	c.startAs("controller-manager-b", "controller-manager", c.controllerManagerArgs(shortLease...)...)
	schedulers := []string{"scheduler", "scheduler-b"}
	managers := []string{"controller-manager", "controller-manager-b"}

	leader := c.leaderOf(t, "kube-scheduler", schedulers...)
	cmLeader := c.leaderOf(t, "kube-controller-manager", managers...)
	k := newKubectl(t, c)
	out := k.mustKubectl(t, "get", "leases", "-n", "kube-system")
	t.Logf("kubectl get leases -n kube-system:\n%s", out)
	holders := parseTable(t, out)
	for lease, proc := range map[string]string{"kube-scheduler": leader, "kube-controller-manager": cmLeader} {
		if got := holders.row(t, "NAME", lease)["HOLDER"]; got != c.identityOf(proc) {
			t.Errorf("kubectl shows %s held by %q, want %s's identity %q", lease, got, proc, c.identityOf(proc))
		}
	}
	// A standby writes nothing: its log has no binding and no controller work.
	for _, proc := range []string{otherOf(schedulers, leader), otherOf(managers, cmLeader)} {
		if data, _ := os.ReadFile(c.logs[proc]); strings.Contains(string(data), "bound pod to node") || strings.Contains(string(data), "controllers started") {
			t.Errorf("the standby %s acted:\n%s", proc, data)
		}
	}

	var schedFailovers, cmFailovers []time.Duration
	for trial := range trials {
		standby := otherOf(schedulers, leader)
		ns := fmt.Sprintf("failover-%d", trial)
		c.do("POST", "/api/v1/namespaces", "application/json", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns), nil)
		// Pods every 50 ms for 6 s; the leader is killed after the 20th.
		const pods = 120
		var wg sync.WaitGroup
		killed := make(chan time.Time, 1)
		wg.Go(func() {
			for i := range pods {
				if i == 20 {
					if err := c.procs[leader].Kill(); err != nil {
						t.Error(err)
					}
					killed <- time.Now()
				}
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-%d"},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}}`, i)
				if code := c.do("POST", "/api/v1/namespaces/"+ns+"/pods", "application/json", body, nil); code != 201 {
					t.Errorf("create pod p-%d: %d", i, code)
				}
				time.Sleep(50 * time.Millisecond) // the creators' pace, not a wait for a condition
			}
		})
		killedAt := <-killed
		testserver.EventuallyWithin(t, 60*time.Second, fmt.Sprintf("every pod of %s is bound", ns), func() (bool, string) {
			var list struct {
				Items []struct{ Spec struct{ NodeName string } }
			}
			c.do("GET", "/api/v1/namespaces/"+ns+"/pods", "", nil, &list)
			bound := 0
			for _, p := range list.Items {
				if p.Spec.NodeName != "" {
					bound++
				}
			}
			return bound == pods, fmt.Sprintf("%d of %d bound", bound, pods)
		})
		wg.Wait()
		acquired := c.firstLogTime(standby, "acquired the Lease: leading")
		firstBind := c.firstLogTime(standby, "bound pod to node")
		if acquired.IsZero() || firstBind.IsZero() {
			t.Fatalf("trial %d: the standby %s logged no acquisition or no binding", trial+1, standby)
		}
		schedFailovers = append(schedFailovers, firstBind.Sub(killedAt).Round(time.Millisecond))
		t.Logf("trial %d: scheduler %s killed; %s took the Lease after %v and bound its first pod after %v",
			trial+1, leader, standby, acquired.Sub(killedAt).Round(time.Millisecond), firstBind.Sub(killedAt).Round(time.Millisecond))
		if got := c.leaseHolder("kube-scheduler"); got != c.identityOf(standby) {
			t.Errorf("trial %d: the Lease is held by %q, want %s's", trial+1, got, standby)
		}

		// The controller manager: kill its leader, scale a ReplicaSet
		// from 1 to 5, and wait for the count.
		cmStandby := otherOf(managers, cmLeader)
		rs := `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
			"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}}}}`
		if code := c.do("POST", "/apis/apps/v1/namespaces/"+ns+"/replicasets", "application/json", rs, nil); code != 201 {
			t.Fatalf("create the ReplicaSet: %d", code)
		}
		readyReplicas := func(want int) func() (bool, string) {
			return func() (bool, string) {
				var got struct{ Status struct{ Replicas int } }
				c.do("GET", "/apis/apps/v1/namespaces/"+ns+"/replicasets/web", "", nil, &got)
				return got.Status.Replicas == want, fmt.Sprintf("status.replicas %d, want %d", got.Status.Replicas, want)
			}
		}
		testserver.EventuallyWithin(t, 30*time.Second, "the ReplicaSet has its first pod", readyReplicas(1))
		if err := c.procs[cmLeader].Kill(); err != nil {
			t.Fatal(err)
		}
		cmKilledAt := time.Now()
		if code := c.do("PATCH", "/apis/apps/v1/namespaces/"+ns+"/replicasets/web", "application/merge-patch+json", `{"spec":{"replicas":5}}`, nil); code != 200 {
			t.Fatalf("scale: %d", code)
		}
		testserver.EventuallyWithin(t, 60*time.Second, "the ReplicaSet reaches 5 under the new controller manager", readyReplicas(5))
		cmFailovers = append(cmFailovers, time.Since(cmKilledAt).Round(time.Millisecond))
		t.Logf("trial %d: controller manager %s killed; %s took the Lease after %v; the ReplicaSet had its 5 pods after %v", trial+1, cmLeader, cmStandby,
			c.firstLogTime(cmStandby, "acquired the Lease: leading").Sub(cmKilledAt).Round(time.Millisecond), cmFailovers[len(cmFailovers)-1].Round(time.Millisecond))

		// A fresh standby for each, in place of the killed one.
		replacement := fmt.Sprintf("scheduler-%d", trial)
		c.startAs(replacement, "scheduler", append(c.serverFlags("scheduler"), shortLease...)...)
		schedulers = []string{standby, replacement}
		leader = standby
		cmReplacement := fmt.Sprintf("controller-manager-%d", trial)
		c.startAs(cmReplacement, "controller-manager", c.controllerManagerArgs(shortLease...)...)
		managers = []string{cmStandby, cmReplacement}
		cmLeader = cmStandby
		testserver.EventuallyWithin(t, 30*time.Second, "the new standbys campaign", func() (bool, string) {
			return c.identityOf(replacement) != "" && c.identityOf(cmReplacement) != "", "not yet"
		})
	}
	t.Logf("scheduler failover, killed → first bind by the new leader, %d trials (lease 3s, renew 2s, retry 500ms): p50 %v, max %v; all %v",
		trials, percentile(schedFailovers, 50), percentile(schedFailovers, 100), schedFailovers)
	t.Logf("controller manager failover, killed → ReplicaSet scaled 1 → 5, %d trials: p50 %v, max %v; all %v",
		trials, percentile(cmFailovers, 50), percentile(cmFailovers, 100), cmFailovers)
}

// otherOf is the name of the pair that is not this one.
func otherOf(pair []string, this string) string {
	if pair[0] == this {
		return pair[1]
	}
	return pair[0]
}

// percentile is the p-th percentile of ds, nearest rank.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[i-1].Round(time.Millisecond)
}
