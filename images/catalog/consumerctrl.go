package catalog

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// The resource consumers' controller: agnhost's resource-consumer-controller
// (Kubernetes' HPA tests run `/agnhost resource-consumer-controller
// --consumer-service-name=NAME --consumer-service-namespace=NS
// --consumer-port=80` behind a Service NAME-ctrl), and /controller of the
// resource-consumer image before it. The tests send it what all the
// replicas together should consume; it spreads that over the consumers:
// a CPU load evenly to each pod of the headless Service NAME-headless if
// it resolves (to --consumer-target-port), else, as every load, in
// requests of requestSizeMillicores (requestSizeMegabytes,
// requestSizeMetrics) and one of the rest, to the consumers' Service.

func consumerController(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	if err := lib.ListenUntilStopped(ctx, p, int32(lib.IntFlag(args, "port", 8080))); err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// consumerTarget is where the controller sends: the consumers' Service
// and its headless twin, named in the cluster's DNS domain.
type consumerTarget struct {
	service, headless string // host names
	port, targetPort  int
}

func consumerTargetOf(p *shell.Process, flags []string) consumerTarget {
	name := lib.StringFlag(flags, "consumer-service-name", "resource-consumer")
	ns := lib.StringFlag(flags, "consumer-service-namespace", "default")
	domain := dnsDomain(p)
	return consumerTarget{service: name + "." + ns + ".svc." + domain, headless: name + "-headless." + ns + ".svc." + domain,
		port: lib.IntFlag(flags, "consumer-port", 8080), targetPort: lib.IntFlag(flags, "consumer-target-port", 8080)}
}

// dnsDomain is the cluster's domain: the search domain "svc.DOMAIN" of
// the pod's /etc/resolv.conf, as agnhost finds it.
func dnsDomain(p *shell.Process) string {
	conf, _ := p.FS.ReadFile("/etc/resolv.conf")
	for _, line := range strings.Split(string(conf), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "search" {
			for _, d := range f[1:] {
				if domain, ok := strings.CutPrefix(d, "svc."); ok {
					return domain
				}
			}
		}
	}
	return "cluster.local"
}

// controllerHandler answers /ConsumeCPU (millicores, durationSec,
// requestSizeMillicores), /ConsumeMem (megabytes, durationSec,
// requestSizeMegabytes) and /BumpMetric (metric, delta, durationSec,
// requestSizeMetrics) once every request it sent is answered.
func controllerHandler(c Running, flags []string) http.Handler {
	target := consumerTargetOf(c.Process, flags)
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
		var param, sizeParam string
		switch r.URL.Path {
		case "/ConsumeCPU":
			param, sizeParam = "millicores", "requestSizeMillicores"
		case "/ConsumeMem":
			param, sizeParam = "megabytes", "requestSizeMegabytes"
		case "/BumpMetric":
			param, sizeParam = "delta", "requestSizeMetrics"
			if r.Form.Get("metric") == "" {
				http.Error(w, consumerMissingArg, http.StatusBadRequest)
				return
			}
		default:
			http.Error(w, consumerUnknownFunction, http.StatusNotFound)
			return
		}
		v, ok := ints(w, r.Form, param, "durationSec", sizeParam)
		if !ok {
			return
		}
		total, secs, size := v[0], v[1], v[2]
		if size <= 0 {
			http.Error(w, consumerIncorrectArg, http.StatusBadRequest)
			return
		}
		send := &fanOut{w: w, client: client, path: r.URL.Path, param: param, secs: secs, metric: r.Form.Get("metric")}
		if r.URL.Path == "/ConsumeCPU" {
			if pods, err := c.Process.LookupHost(r.Context(), target.headless); err == nil && len(pods) > 0 {
				each := max(total/len(pods), 1)
				fmt.Fprintf(w, "RC manager (per-pod): sending %d millicores to each of %d pods via headless DNS\n", each, len(pods))
				send.quiet = true // only failures are told
				for _, pod := range pods {
					send.one(fmt.Sprintf("http://%s:%d", pod, target.targetPort), each)
				}
				send.wg.Wait()
				return
			}
		}
		count, rest := total/size, total%size
		switch r.URL.Path {
		case "/ConsumeCPU":
			fmt.Fprintf(w, "RC manager: sending %v requests to consume %v millicores each and 1 request to consume %v millicores\n", count, size, rest)
		case "/ConsumeMem":
			fmt.Fprintf(w, "RC manager: sending %v requests to consume %v MB each and 1 request to consume %v MB\n", count, size, rest)
		default:
			fmt.Fprintf(w, "RC manager: sending %v requests to bump custom metric by %v each and 1 request to bump by %v\n", count, size, rest)
		}
		service := fmt.Sprintf("http://%s:%d", target.service, target.port)
		for range count {
			send.one(service, size)
		}
		if rest > 0 {
			send.one(service, rest)
		}
		send.wg.Wait()
	}))
}

// fanOut sends one request's share to a consumer and reports it in the
// answer, as the requests come back.
type fanOut struct {
	w                   io.Writer
	client              *http.Client
	path, param, metric string
	secs                int
	quiet               bool // no line for a request that succeeded
	mu                  sync.Mutex
	wg                  sync.WaitGroup
}

func (f *fanOut) one(base string, n int) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		form := url.Values{f.param: {strconv.Itoa(n)}, "durationSec": {strconv.Itoa(f.secs)}}
		if f.metric != "" {
			form.Set("metric", f.metric)
		}
		resp, err := f.client.PostForm(base+f.path, form)
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil {
			fmt.Fprintf(f.w, "Failed to connect to consumer: %v\n", err)
			return
		}
		resp.Body.Close()
		switch {
		case f.quiet:
		case f.path == "/ConsumeCPU":
			fmt.Fprintf(f.w, "Consumed %d millicores\n", n)
		case f.path == "/ConsumeMem":
			fmt.Fprintf(f.w, "Consumed %d megabytes\n", n)
		default:
			fmt.Fprintf(f.w, "Bumped metric %s by %d\n", f.metric, n)
		}
	}()
}
