// Command mkube is mkube's own small client for what no real cluster
// shows. One subcommand so far:
//
//	mkube explain pod NAME [-n NAMESPACE] [--server URL]
//
// prints why the scheduler put the pod where it did: for every node it
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
// The API server's address comes from --server, else $MKUBE_SERVER, else
// http://127.0.0.1:8080.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/scheduler/explanation"
)

// requestTimeout bounds the one GET: an API server that does not answer
// in 30 seconds is not going to.
const requestTimeout = 30 * time.Second

const usage = `usage: mkube explain pod NAME [-n NAMESPACE] [--server URL]

Prints why the scheduler placed pod NAME on its node (every node's filter
verdict and scores), or, for a Pending pod, why it fits no node.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command, for tests: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "explain" {
		fmt.Fprint(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("mkube explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	var namespace string
	fs.StringVar(&namespace, "n", corev1.NamespaceDefault, "the pod's namespace")
	fs.StringVar(&namespace, "namespace", corev1.NamespaceDefault, "the pod's namespace")
	server := fs.String("server", defaultServer(), "URL of the API server (default from $MKUBE_SERVER)")
	words, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	name, err := podName(words)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n%s", err, usage)
		return 2
	}

	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	pod := &corev1.Pod{}
	if err := client.New(*server, "mkube-cli").Get(ctx, client.Pods, namespace, name, pod); err != nil {
		if reason := apierrors.ReasonForError(err); reason != "" && reason != "Unknown" {
			fmt.Fprintf(stderr, "Error from server (%s): %v\n", reason, err)
		} else {
			fmt.Fprintf(stderr, "error: get pod %s/%s: %v\n", namespace, name, err)
		}
		return 1
	}
	if err := explanation.WritePod(stdout, pod); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
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

// podName accepts "pod NAME", "pods NAME" and "pod/NAME".
func podName(words []string) (string, error) {
	switch {
	case len(words) == 1 && strings.HasPrefix(words[0], "pod/"):
		return strings.TrimPrefix(words[0], "pod/"), nil
	case len(words) == 2 && (words[0] == "pod" || words[0] == "pods" || words[0] == "po"):
		return words[1], nil
	case len(words) == 0:
		return "", errors.New("explain what? mkube explains pods")
	}
	return "", fmt.Errorf("cannot explain %q: mkube explains pods (mkube explain pod NAME)", strings.Join(words, " "))
}
