// Command mkube is mkube's own small client for what no real cluster
// shows, or lets you do:
//
//	mkube explain pod NAME [-n NAMESPACE]
//	mkube crash POD [-c CONTAINER] [--exit N] [-n NAMESPACE]
//	mkube oom POD [-c CONTAINER] [-n NAMESPACE]
//	mkube fail-probes POD [-c CONTAINER] [--count N] [-n NAMESPACE]
//	mkube freeze NODE | mkube thaw NODE
//	mkube inspect POD [-c CONTAINER] [-n NAMESPACE]
//	mkube serve-charts [--listen 127.0.0.1:8879] [--dir DIR]
//	mkube lb --backends HOST:PORT,... [--listen 0.0.0.0:6443]
//	mkube etcd get KEY [--prefix] [--keys-only] [-o yaml|json] [--etcd-endpoints URLS]
//
// explain prints why the scheduler put the pod where it did: for every node it
// evaluated, the filter that rejected it and why, or each score plugin's
// score (0-100), its weight and the node's total. The scheduler stores
// this in the pod's annotation mkube.io/scheduling-explanation when it
// binds it (package scheduler/explanation). For a Pending pod it prints
// the FailedScheduling message of its PodScheduled condition:
//
//	$ mkube explain pod preferring
//	Pod default/preferring was scheduled to node03.
//	3 nodes in the cluster, 3 evaluated, 3 feasible. Each plugin scores 0-100; TOTAL = Σ score × weight.
//
//	NODE    VERDICT   TOTAL  NodeAffinity×2  NodeResourcesFit×1  NodeResourcesBalancedAllocation×1  REASON
//	node03  selected  391    100             93                  98
//	node01  feasible  196    0               97                  99
//	node02  feasible  196    0               97                  99
//
//	Scores with nothing to compare for this pod:
//	  TaintToleration   no feasible node has a PreferNoSchedule taint
//	  ...
//
//	$ mkube explain pod myapp-demo8
//	Pod default/myapp-demo8 is Pending (Unschedulable):
//	  0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..
//
// A pod that preempted lower-priority pods says, while it waits, which
// node it is nominated to, and once bound, which pods it evicted there.
//
// The others inject faults, for teaching, into the simulated container
// runtime of a pod's node (see faults.go): crash makes the container's
// process exit with a code (default 1), oom has the OOM killer end it
// (137, OOMKilled), fail-probes makes its next probes fail, freeze makes
// the node's runtime hang until thaw, and inspect prints the process's
// command line, memory, listening ports and files. Watch the kubelet
// restart the container with `kubectl get pod -w`.
//
// serve-charts serves mkube's own Helm charts (package charts: mysql,
// nginx, guestbook) as a chart repository, for `helm repo add stable
// http://127.0.0.1:8879` with no internet (charts.go).
//
// lb is a TCP load balancer in front of several API servers, the one
// address of docker-compose.ha.yml's control plane (package
// internal/loadbalancer; lb.go).
//
// etcd get prints what the API server stored under a key, as YAML or
// JSON, whether it stored JSON or protobuf (--storage-media-type; package
// apiserver/storageformat): what `etcdctl get` shows, made readable, as
// auger does for Kubernetes (etcd.go).
//
// The API server's address comes from --server, else $MKUBE_SERVER, else
// http://127.0.0.1:8080.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// requestTimeout bounds each command's requests: an API server that does
// not answer in 30 seconds is not going to.
const requestTimeout = 30 * time.Second

const usage = `usage: mkube explain pod NAME [-n NAMESPACE] [--server URL]
       mkube crash POD [-c CONTAINER] [--exit N] [-n NAMESPACE]
       mkube oom POD [-c CONTAINER] [-n NAMESPACE]
       mkube fail-probes POD [-c CONTAINER] [--count N] [-n NAMESPACE]
       mkube freeze NODE
       mkube thaw NODE
       mkube inspect POD [-c CONTAINER] [-n NAMESPACE]
       mkube serve-charts [--listen 127.0.0.1:8879] [--dir DIR]
       mkube lb --backends HOST:PORT,... [--listen 0.0.0.0:6443]
       mkube etcd get KEY [--prefix] [--keys-only] [-o yaml|json] [--etcd-endpoints URLS]

explain says why the scheduler placed a pod; the others inject faults
into a node's container runtime, or look inside a container's process.
Every command takes --server URL (default $MKUBE_SERVER). serve-charts
serves mkube's Helm charts as a chart repository; lb balances
connections over several API servers; etcd get prints a stored object
readably, whatever format it is stored in.
`

// commands are the subcommands by name; each gets the words after it.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"explain":     runExplain,
	"crash":       runCrash,
	"oom":         runOOM,
	"fail-probes": runFailProbes,
	"freeze": func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return runFreeze(ctx, args, true, stdout, stderr)
	},
	"thaw": func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return runFreeze(ctx, args, false, stdout, stderr)
	},
	"inspect":      runInspect,
	"serve-charts": runServeCharts,
	"lb":           runLB,
	"etcd":         runEtcd,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command, for tests: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args = commandFirst(args)
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if commands[args[0]] == nil {
		fmt.Fprintf(stderr, "error: unknown command %q for \"mkube\"\n\n%s", args[0], usage)
		return 2
	}
	return commands[args[0]](ctx, args[1:], stdout, stderr)
}

// commandFirst moves flags given before the subcommand after it, as
// kubectl allows both: `mkube --server URL crash web` is `mkube crash web
// --server URL`. A flag without "=" takes the next word as its value.
func commandFirst(args []string) []string {
	var flags []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		n := 1
		if !strings.Contains(args[0], "=") && len(args) > 1 {
			n = 2
		}
		flags, args = append(flags, args[:n]...), args[n:]
	}
	if len(args) == 0 {
		return nil
	}
	return append(append([]string{args[0]}, args[1:]...), flags...)
}

// printError prints an error as kubectl does: the API server's reason if
// it gave one, else what was being done.
func printError(stderr io.Writer, doing string, err error) {
	if reason := apierrors.ReasonForError(err); reason != "" && reason != "Unknown" {
		fmt.Fprintf(stderr, "Error from server (%s): %v\n", reason, err)
	} else {
		fmt.Fprintf(stderr, "error: %s: %v\n", doing, err)
	}
}

func defaultServer() string {
	if s := os.Getenv("MKUBE_SERVER"); s != "" {
		return s
	}
	return "http://127.0.0.1:8080"
}

// parseInterleaved parses flags placed anywhere among the words, as
// kubectl allows ("explain pod web -n prod" and "explain -n prod pod web"),
// and returns the words.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return words, nil
		}
		words, args = append(words, args[0]), args[1:]
	}
}
