package pleg

import (
	"context"
	"io"
	"log/slog"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// RetryPeriod is how long the PLEG waits before it opens the stream
// again after it broke.
const RetryPeriod = time.Second

// Handler is what the kubelet does with the events.
type Handler interface {
	// OnContainerEvent is one container that was created, started,
	// stopped or deleted: the kubelet syncs its pod.
	OnContainerEvent(ev *runtimeapi.ContainerEventResponse)
	// Relist is called after the stream broke: an event may have been
	// missed meanwhile, so every pod is synced once.
	Relist()
}

// PLEG follows one runtime's container events.
type PLEG struct {
	runtime runtimeapi.RuntimeServiceClient
	handler Handler
	clock   clock.Clock
	log     *slog.Logger
}

// New returns the PLEG of runtime, telling handler.
func New(runtime runtimeapi.RuntimeServiceClient, handler Handler, clk clock.Clock, log *slog.Logger) *PLEG {
	return &PLEG{runtime: runtime, handler: handler, clock: clk, log: log}
}

// Run follows the runtime's container events until ctx ends: it blocks.
// After the stream broke, the handler relists.
func (p *PLEG) Run(ctx context.Context) {
	for ctx.Err() == nil {
		stream, err := p.runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
		for err == nil {
			var ev *runtimeapi.ContainerEventResponse
			if ev, err = stream.Recv(); err == nil {
				p.handler.OnContainerEvent(ev)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err != io.EOF {
			p.log.Warn("PLEG: container events broke off; resyncing every pod", "err", err)
		}
		p.handler.Relist()
		select {
		case <-ctx.Done():
		case <-p.clock.After(RetryPeriod):
		}
	}
}
