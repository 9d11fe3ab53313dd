package metrics

import (
	"context"
	"path"
	"strings"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"k8s.io/utils/clock"
)

// RuntimeOperations count the kubelet's CRI calls (upstream's
// instrumented_services.go): kubelet_runtime_operations_total,
// ..._errors_total and ..._duration_seconds by operation_type
// ("list_containers"). A process's nodes share one runtime connection,
// so one RuntimeOperations is registered in every node's registry.
type RuntimeOperations struct {
	total, errors *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	clock         clock.PassiveClock
}

// NewRuntimeOperations returns the counters, timed on clk.
func NewRuntimeOperations(clk clock.PassiveClock) *RuntimeOperations {
	labels := []string{"operation_type"}
	return &RuntimeOperations{clock: clk,
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: "runtime_operations_total",
			Help: "Cumulative number of runtime operations by operation type."}, labels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: "runtime_operations_errors_total",
			Help: "Cumulative number of runtime operation errors by operation type."}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "runtime_operations_duration_seconds",
			Help:    "Duration in seconds of runtime operations. Broken down by operation type.",
			Buckets: prometheus.ExponentialBuckets(.005, 2.5, 14)}, labels),
	}
}

func (o *RuntimeOperations) Describe(ch chan<- *prometheus.Desc) {
	o.total.Describe(ch)
	o.errors.Describe(ch)
	o.duration.Describe(ch)
}

func (o *RuntimeOperations) Collect(ch chan<- prometheus.Metric) {
	o.total.Collect(ch)
	o.errors.Collect(ch)
	o.duration.Collect(ch)
}

// Interceptor counts each unary CRI call.
func (o *RuntimeOperations) Interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		op := operationType(method)
		start := o.clock.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		o.total.WithLabelValues(op).Inc()
		o.duration.WithLabelValues(op).Observe(o.clock.Since(start).Seconds())
		if err != nil {
			o.errors.WithLabelValues(op).Inc()
		}
		return err
	}
}

// operationType is a gRPC method as the kubelet names the operation:
// "/runtime.v1.RuntimeService/ListContainers" is "list_containers".
func operationType(method string) string {
	var b strings.Builder
	for i, r := range path.Base(method) {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
