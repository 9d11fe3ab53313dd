package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// logsGenerator is `agnhost logs-generator --log-lines-total N
// --run-duration D`, which Kubernetes' `kubectl logs` test reads: N lines
// spread evenly over D, each a klog line on stderr of a made-up API
// request,
//
//	I1202 00:11:26.583949       1 logs_generator.go:76] 0 GET /api/v1/namespaces/kube-system/pods/vgx 438
//
// then it exits 0. The requests are random as in the real one, from a
// generator seeded with the line count, so that a run can be replayed.
func logsGenerator(ctx context.Context, p *shell.Process, args []string) (int, error) {
	total := lib.IntFlag(args, "log-lines-total", 0)
	if total <= 0 {
		lib.KlogLine(p, 'F', "logs_generator.go:64", fmt.Sprintf("Invalid total number of lines: %d", total))
		return 255, nil
	}
	d, err := time.ParseDuration(lib.StringFlag(args, "run-duration", "0s"))
	if err != nil || d <= 0 {
		lib.KlogLine(p, 'F', "logs_generator.go:68", fmt.Sprintf("Invalid duration: %v", d))
		return 255, nil
	}
	rng := rand.New(rand.NewPCG(uint64(total), uint64(d)))
	methods, namespaces := []string{"GET", "POST", "PUT"}, []string{"kube-system", "default", "ns"}
	const letters = "bcdfghjklmnpqrstvwxz2456789" // apimachinery's rand.String alphabet
	delay := d / time.Duration(total)
	for id := range total {
		name := make([]byte, 3+rng.IntN(2))
		for i := range name {
			name[i] = letters[rng.IntN(len(letters))]
		}
		lib.KlogLine(p, 'I', "logs_generator.go:76", fmt.Sprintf("%d %s /api/v1/namespaces/%s/pods/%s %d",
			id, methods[rng.IntN(len(methods))], namespaces[rng.IntN(len(namespaces))], name, 200+rng.IntN(400)))
		select {
		case <-ctx.Done():
			return 137, ctx.Err()
		case <-p.Terminated():
			return agnhostExitOnSignal, nil
		case <-p.Clock.After(delay):
		}
	}
	return 0, nil
}
