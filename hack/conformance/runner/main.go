// Command runner runs Kubernetes' [Conformance] specs against mkube:
// it starts mkube from bin/ on free ports, applies the metrics-server
// add-on as a learner does (the HPA and metrics specs read it), lists the
// specs the focus selects (a dry run of the suite), runs each in a process
// of its own —
// PARALLEL at a time, then the [Serial] ones alone — and prints a line
// per spec and the totals by SIG. `make conformance [FOCUS=re] [PARALLEL=n]`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

func main() {
	e2e := flag.String("e2e", "bin/e2e.test", "Kubernetes' e2e test binary")
	bin := flag.String("bin", "bin", "the directory of mkube's binaries")
	focus := flag.String("focus", `\[Conformance\]`, "which specs: a regexp on their full names")
	skip := flag.String("skip", "", "specs not to run: a regexp on their full names")
	parallel := flag.Int("parallel", 2, "specs running at once (the [Serial] ones always run alone)")
	nodes := flag.Int("nodes", 3, "kubelets to start")
	addon := flag.String("addon", "addons/metrics-server.yaml", "an add-on to apply once the nodes are Ready (empty: none)")
	// Six minutes: the probe specs that check a container is *not*
	// restarted watch it for four minutes once it runs.
	timeout := flag.Duration("timeout", 6*time.Minute, "each spec's ginkgo timeout")
	slowTimeout := flag.Duration("slow-timeout", 12*time.Minute, "the timeout of [Slow] specs, if longer")
	out := flag.String("out", "", "where reports and logs go (default: a new temporary directory)")
	flag.Parse()
	if err := run(*e2e, *bin, *focus, *skip, *out, *addon, *parallel, *nodes, *timeout, *slowTimeout); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(e2e, bin, focus, skip, out, addon string, parallel, nodes int, timeout, slowTimeout time.Duration) error {
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "mkube-conformance-"); err != nil {
			return err
		}
	}
	c, err := startCluster(bin, filepath.Join(out, "cluster"), nodes, addon)
	if err != nil {
		return err
	}
	defer c.stop()
	specs, err := listSpecs(e2e, c.kubeconfig, out, focus, skip)
	if err != nil {
		return err
	}
	fmt.Printf("mkube at %s, %d nodes; %d specs; reports in %s\n", c.plain, nodes, len(specs), out)

	results := make([]verdict, len(specs))
	var serial, rest []int
	for i, s := range specs {
		if s.Serial {
			serial = append(serial, i)
		} else {
			rest = append(rest, i)
		}
	}
	var mu sync.Mutex // owner: run; orders the printed lines
	runAll := func(indexes []int, workers int) {
		next := make(chan int) // closed once every index is handed out
		var wg sync.WaitGroup
		for range max(workers, 1) {
			wg.Go(func() {
				for i := range next {
					t := timeout
					if specs[i].Slow {
						t = max(timeout, slowTimeout)
					}
					v := runSpec(e2e, c.kubeconfig, filepath.Join(out, "specs", fmt.Sprintf("%04d", i)), specs[i], t)
					mu.Lock()
					results[i] = v
					printVerdict(specs[i], v)
					mu.Unlock()
				}
			})
		}
		for _, i := range indexes {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	runAll(rest, parallel)
	runAll(serial, 1)
	failed := printTotals(specs, results)
	if failed > 0 {
		return fmt.Errorf("%d specs failed", failed)
	}
	return nil
}

func printVerdict(s spec, v verdict) {
	line := fmt.Sprintf("%-4s %s (%.0fs)", v.State, s.Name, v.Duration.Seconds())
	if v.Message != "" {
		line += "\n       " + v.Message
	}
	fmt.Println(line)
}

// printTotals prints passed/run by SIG and overall, and returns how many
// failed.
func printTotals(specs []spec, results []verdict) int {
	type tally struct{ pass, fail, skip int }
	bySIG := map[string]*tally{}
	var all tally
	for i, s := range specs {
		t := bySIG[s.sig()]
		if t == nil {
			t = &tally{}
			bySIG[s.sig()] = t
		}
		for _, x := range []*tally{t, &all} {
			switch results[i].State {
			case "PASS":
				x.pass++
			case "SKIP":
				x.skip++
			default:
				x.fail++
			}
		}
	}
	sigs := make([]string, 0, len(bySIG))
	for sig := range bySIG {
		sigs = append(sigs, sig)
	}
	sort.Strings(sigs)
	fmt.Println("\nby SIG (passed/run, skipped):")
	for _, sig := range sigs {
		t := bySIG[sig]
		fmt.Printf("  %-28s %3d/%-3d  %d skipped\n", sig, t.pass, t.pass+t.fail, t.skip)
	}
	fmt.Printf("total: %d passed, %d failed, %d skipped, of %d\n", all.pass, all.fail, all.skip, len(specs))
	return all.fail
}
