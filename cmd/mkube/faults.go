package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The fault commands reach the runtime as `kubectl logs` reaches a log:
// the CLI cannot dial a node's runtime socket (in docker compose it is
// inside the kubelet's container), so it asks the API server to proxy to
// the node's kubelet,
//
//	POST /api/v1/nodes/<node>/proxy/mkube/faults/<ns>/<pod>/<container>/crash?exitCode=3
//
// and the kubelet calls the runtime's Faults service (kubelet/server/faults.go).

// faultFlags are the flags every pod fault command takes.
type faultFlags struct {
	fs                           *flag.FlagSet
	namespace, container, server string
}

func newFaultFlags(name, usage string, stderr io.Writer) *faultFlags {
	f := &faultFlags{fs: flag.NewFlagSet("mkube "+name, flag.ContinueOnError)}
	f.fs.SetOutput(stderr)
	f.fs.Usage = func() { fmt.Fprint(stderr, usage); f.fs.PrintDefaults() }
	f.fs.StringVar(&f.namespace, "n", corev1.NamespaceDefault, "the pod's namespace")
	f.fs.StringVar(&f.namespace, "namespace", corev1.NamespaceDefault, "the pod's namespace")
	f.fs.StringVar(&f.container, "c", "", "the container (default: the pod's first)")
	f.fs.StringVar(&f.container, "container", "", "the container (default: the pod's first)")
	f.fs.StringVar(&f.server, "server", defaultServer(), "URL of the API server (default from $MKUBE_SERVER)")
	return f
}

// parse reads the flags and the one word, POD or NODE, the command takes.
func (f *faultFlags) parse(args []string, what string, stderr io.Writer) (string, bool) {
	words, err := parseInterleaved(f.fs, args)
	if err != nil {
		return "", false
	}
	if len(words) != 1 {
		fmt.Fprintf(stderr, "error: expected one %s name, got %d words\n", what, len(words))
		f.fs.Usage()
		return "", false
	}
	return strings.TrimPrefix(strings.TrimPrefix(words[0], "pod/"), "node/"), true
}

// target is the container a pod fault is aimed at, and its node.
type target struct {
	namespace, pod, container, node string
}

// findTarget reads the pod: the node it runs on, and its first container
// unless one is named.
func findTarget(ctx context.Context, f *faultFlags, pod string) (target, error) {
	p := &corev1.Pod{}
	if err := client.New(f.server, "mkube-cli").Get(ctx, client.Pods, f.namespace, pod, p); err != nil {
		return target{}, err
	}
	t := target{namespace: p.Namespace, pod: p.Name, container: f.container, node: p.Spec.NodeName}
	if t.node == "" {
		return target{}, fmt.Errorf("pod %s/%s is not scheduled to a node yet", t.namespace, t.pod)
	}
	if t.container == "" {
		t.container = p.Spec.Containers[0].Name
	}
	return t, nil
}

// path is the kubelet's path for a fault (or "process") of t.
func (t target) path(fault string) string {
	return fmt.Sprintf("/mkube/faults/%s/%s/%s/%s", url.PathEscape(t.namespace), url.PathEscape(t.pod), url.PathEscape(t.container), fault)
}

func (t target) String() string { return "pod " + t.namespace + "/" + t.pod }

// callKubelet sends method and path (with query) to node's kubelet
// through the API server's nodes/proxy, and returns the answer's body.
// The API server's own failures (no such node, a kubelet it cannot
// reach) come back as a Status, the kubelet's as plain text.
func callKubelet(ctx context.Context, server, method, node, path string, query url.Values) ([]byte, error) {
	u := strings.TrimSuffix(server, "/") + "/api/v1/nodes/" + url.PathEscape(node) + "/proxy" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "mkube-cli")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return body, nil
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return nil, &apierrors.StatusError{ErrStatus: st}
	}
	return nil, errors.New(strings.TrimSpace(string(body)))
}

// podFault is the run of crash, oom and fail-probes: find the target,
// send the fault with the query (read once the flags are parsed), and
// print done(target) on success.
func podFault(ctx context.Context, f *faultFlags, args []string, stdout, stderr io.Writer,
	fault string, query func() url.Values, done func(target) string) int {
	pod, ok := f.parse(args, "pod", stderr)
	if !ok {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	t, err := findTarget(ctx, f, pod)
	if err != nil {
		printError(stderr, fmt.Sprintf("get pod %s/%s", f.namespace, pod), err)
		return 1
	}
	if _, err := callKubelet(ctx, f.server, http.MethodPost, t.node, t.path(fault), query()); err != nil {
		printError(stderr, fault+" "+t.String(), err)
		return 1
	}
	fmt.Fprintln(stdout, done(t))
	return 0
}

func noQuery() url.Values { return nil }

const crashUsage = `usage: mkube crash POD [-c CONTAINER] [--exit N] [-n NAMESPACE] [--server URL]

Makes the container's process exit now with code N (default 1), as if it
had died: the kubelet restarts it per the pod's restartPolicy.
`

func runCrash(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newFaultFlags("crash", crashUsage, stderr)
	code := f.fs.Int("exit", 1, "the exit code")
	return podFault(ctx, f, args, stdout, stderr, "crash",
		func() url.Values { return url.Values{"exitCode": {strconv.Itoa(*code)}} },
		func(t target) string {
			return fmt.Sprintf("%s: container %s exited with code %d (injected)", t, t.container, *code)
		})
}

const oomUsage = `usage: mkube oom POD [-c CONTAINER] [-n NAMESPACE] [--server URL]

Has the kernel's OOM killer end the container: exit code 137, reason
OOMKilled, as when it uses more memory than its limit.
`

func runOOM(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newFaultFlags("oom", oomUsage, stderr)
	return podFault(ctx, f, args, stdout, stderr, "oom", noQuery, func(t target) string {
		return fmt.Sprintf("%s: container %s was OOM-killed, exit code 137 (injected)", t, t.container)
	})
}

const failProbesUsage = `usage: mkube fail-probes POD [-c CONTAINER] [--count N] [-n NAMESPACE] [--server URL]

Makes the container's next N probes (default 1) fail, whatever their kind:
the kubelet asks the runtime before each probe whether it is to fail.
`

func runFailProbes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newFaultFlags("fail-probes", failProbesUsage, stderr)
	count := f.fs.Int("count", 1, "how many probes fail")
	return podFault(ctx, f, args, stdout, stderr, "fail-probes",
		func() url.Values { return url.Values{"count": {strconv.Itoa(*count)}} },
		func(t target) string {
			return fmt.Sprintf("%s: the next %d probes of container %s will fail (injected)", t, *count, t.container)
		})
}

const freezeUsage = `usage: mkube freeze NODE [--server URL]
       mkube thaw NODE [--server URL]

freeze makes the node's container runtime hang: every CRI call waits,
so the kubelet makes no progress on the node's pods until thaw.
`

func runFreeze(ctx context.Context, args []string, frozen bool, stdout, stderr io.Writer) int {
	name := "thaw"
	if frozen {
		name = "freeze"
	}
	f := newFaultFlags(name, freezeUsage, stderr)
	node, ok := f.parse(args, "node", stderr)
	if !ok {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	query := url.Values{"frozen": {strconv.FormatBool(frozen)}}
	if _, err := callKubelet(ctx, f.server, http.MethodPost, node, "/mkube/faults/freeze", query); err != nil {
		printError(stderr, name+" node "+node, err)
		return 1
	}
	if frozen {
		fmt.Fprintf(stdout, "node %s: container runtime frozen; CRI calls hang until `mkube thaw %s`\n", node, node)
	} else {
		fmt.Fprintf(stdout, "node %s: container runtime thawed\n", node)
	}
	return 0
}

const inspectUsage = `usage: mkube inspect POD [-c CONTAINER] [-n NAMESPACE] [--server URL]

Prints what the container's simulated process is: its command line,
state, memory, listening ports, environment and files.
`

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newFaultFlags("inspect", inspectUsage, stderr)
	pod, ok := f.parse(args, "pod", stderr)
	if !ok {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	t, err := findTarget(ctx, f, pod)
	if err != nil {
		printError(stderr, fmt.Sprintf("get pod %s/%s", f.namespace, pod), err)
		return 1
	}
	body, err := callKubelet(ctx, f.server, http.MethodGet, t.node, t.path("process"), nil)
	if err != nil {
		printError(stderr, "inspect "+t.String(), err)
		return 1
	}
	proc := &runtimev1.InspectProcessResponse{}
	if err := protojson.Unmarshal(body, proc); err != nil {
		fmt.Fprintf(stderr, "error: inspect %s: %v\n", t, err)
		return 1
	}
	writeProcess(stdout, t, proc)
	return 0
}

// writeProcess prints proc as `mkube inspect` shows it.
func writeProcess(w io.Writer, t target, proc *runtimev1.InspectProcessResponse) {
	fmt.Fprintf(w, "%s, container %s, on node %s\n", t, t.container, t.node)
	fmt.Fprintf(w, "State:    %s\n", proc.GetState())
	fmt.Fprintf(w, "Command:  %s\n", quoteArgs(proc.GetArgv()))
	fmt.Fprintf(w, "Memory:   %d bytes\n", proc.GetMemoryBytes())
	var ports []string
	for _, p := range proc.GetListeningPorts() {
		ports = append(ports, strconv.Itoa(int(p))+"/TCP")
	}
	fmt.Fprintf(w, "Ports:    %s\n", orNone(strings.Join(ports, ", ")))
	if n := proc.GetProbeFailures(); n > 0 {
		fmt.Fprintf(w, "Probes:   the next %d will fail (injected)\n", n)
	}
	fmt.Fprintln(w, "Env:")
	for _, kv := range proc.GetEnv() {
		fmt.Fprintf(w, "  %s\n", kv)
	}
	fmt.Fprintln(w, "Files:")
	for _, file := range proc.GetFiles() {
		fmt.Fprintf(w, "  %8d  %s\n", file.GetSize(), file.GetPath())
	}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// quoteArgs joins a command line, quoting the words a shell would split.
func quoteArgs(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n\"'\\$;&|") {
			w = strconv.Quote(w)
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}
