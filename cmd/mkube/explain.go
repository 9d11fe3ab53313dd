package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/scheduler/explanation"
)

const explainUsage = `usage: mkube explain pod NAME [-n NAMESPACE] [--server URL]

Prints why the scheduler placed pod NAME on its node (every node's filter
verdict and scores), or, for a Pending pod, why it fits no node.
`

// runExplain is `mkube explain`; args follow the subcommand.
func runExplain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mkube explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, explainUsage); fs.PrintDefaults() }
	var namespace string
	fs.StringVar(&namespace, "n", corev1.NamespaceDefault, "the pod's namespace")
	fs.StringVar(&namespace, "namespace", corev1.NamespaceDefault, "the pod's namespace")
	server := fs.String("server", defaultServer(), "URL of the API server (default from $MKUBE_SERVER)")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	name, err := podName(words)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n%s", err, explainUsage)
		return 2
	}

	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	pod := &corev1.Pod{}
	if err := client.New(*server, "mkube-cli").Get(ctx, client.Pods, namespace, name, pod); err != nil {
		printError(stderr, fmt.Sprintf("get pod %s/%s", namespace, name), err)
		return 1
	}
	if err := explanation.WritePod(stdout, pod); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
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
