package catalog

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// consumerController is the resource-consumer image's /controller
// (--port, --consumer-port, --consumer-service-name,
// --consumer-service-namespace): Kubernetes' HPA tests send it what all
// the replicas together should consume, and it spreads that over the
// consumers' Service in requests of a given size.
func consumerController(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	if err := lib.ListenUntilStopped(ctx, p, int32(lib.IntFlag(args, "port", 8080))); err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// controllerHandler answers /ConsumeCPU (millicores, durationSec,
// requestSizeMillicores), /ConsumeMem (megabytes, durationSec,
// requestSizeMegabytes) and /BumpMetric (metric, delta, durationSec,
// requestSizeMetrics) by sending delta/size requests of size and one of
// the rest to the consumers, all at once, and answering once they are
// answered.
func controllerHandler(c Running) http.Handler {
	args, _ := splitCommand(c.Argv, "controller")
	target := fmt.Sprintf("http://%s.%s.svc.cluster.local:%d",
		lib.StringFlag(args, "consumer-service-name", "resource-consumer"),
		lib.StringFlag(args, "consumer-service-namespace", "default"), lib.IntFlag(args, "consumer-port", 8080))
	client := &http.Client{Transport: lib.PodTransport(c.Process, nil)}
	return withCPU(c.Process, goHandlerCPU, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, consumerBadRequest, http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var total, size, secs int
		var unit, param, sizeParam string
		switch r.URL.Path {
		case "/ConsumeCPU":
			unit, param, sizeParam = "millicores", "millicores", "requestSizeMillicores"
		case "/ConsumeMem":
			unit, param, sizeParam = "MB", "megabytes", "requestSizeMegabytes"
		case "/BumpMetric":
			unit, param, sizeParam = "", "delta", "requestSizeMetrics"
			if r.Form.Get("metric") == "" {
				http.Error(w, consumerMissingArg, http.StatusBadRequest)
				return
			}
		default:
			http.Error(w, consumerUnknownFunction+": "+r.URL.Path, http.StatusNotFound)
			return
		}
		v, ok := ints(w, r.Form, param, "durationSec", sizeParam)
		if !ok {
			return
		}
		total, secs, size = v[0], v[1], v[2]
		if size <= 0 {
			http.Error(w, consumerIncorrectArg, http.StatusBadRequest)
			return
		}
		count, rest := total/size, total%size
		if unit == "" {
			fmt.Fprintf(w, "RC manager: sending %v requests to bump custom metric by %v each and 1 request to bump by %v\n", count, size, rest)
		} else {
			fmt.Fprintf(w, "RC manager: sending %v requests to consume %v %s each and 1 request to consume %v %s\n", count, size, unit, rest, unit)
		}
		sizes := make([]int, count, count+1)
		for i := range sizes {
			sizes[i] = size
		}
		if rest > 0 {
			sizes = append(sizes, rest)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, n := range sizes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				form := url.Values{param: {strconv.Itoa(n)}, "durationSec": {strconv.Itoa(secs)}}
				if m := r.Form.Get("metric"); m != "" {
					form.Set("metric", m)
				}
				resp, err := client.PostForm(target+r.URL.Path, form)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					fmt.Fprintf(w, "Failed to connect to consumer: %v\n", err)
					return
				}
				resp.Body.Close()
				switch r.URL.Path {
				case "/ConsumeCPU":
					fmt.Fprintf(w, "Consumed %d millicores\n", n)
				case "/ConsumeMem":
					fmt.Fprintf(w, "Consumed %d megabytes\n", n)
				default:
					fmt.Fprintf(w, "Bumped metric %s by %d\n", r.Form.Get("metric"), n)
				}
			}()
		}
		wg.Wait()
	}))
}
