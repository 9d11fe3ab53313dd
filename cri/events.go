package cri

import (
	"sync"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Container events are how a kubelet learns, without asking, that a
// container started or exited: CRI's GetContainerEvents stream, which the
// kubelet's evented PLEG (pod lifecycle event generator) reads instead of
// listing every container every second. `crictl events` prints it too.
// Each subscriber gets every event from when it subscribed, in order; a
// slow one only delays itself, and nothing is dropped.

// subscriber is one open GetContainerEvents stream.
type subscriber struct {
	mu      sync.Mutex
	pending []*runtimeapi.ContainerEventResponse
	ready   chan struct{} // has a value while pending is not empty
}

func (sub *subscriber) push(ev *runtimeapi.ContainerEventResponse) {
	sub.mu.Lock()
	sub.pending = append(sub.pending, ev)
	sub.mu.Unlock()
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

func (sub *subscriber) take() []*runtimeapi.ContainerEventResponse {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := sub.pending
	sub.pending = nil
	return out
}

// publish tells every subscriber what happened to c. Callers hold s.mu,
// which orders the events as the changes they report.
func (s *Server) publish(c *container, sb *sandbox, typ runtimeapi.ContainerEventType) {
	if len(s.subscribers) == 0 {
		return
	}
	ev := &runtimeapi.ContainerEventResponse{ContainerId: c.id, ContainerEventType: typ, CreatedAt: s.clock.Now().UnixNano()}
	if sb != nil {
		ev.PodSandboxStatus = &runtimeapi.PodSandboxStatus{Id: sb.id, Metadata: sb.config.GetMetadata(), State: sb.state,
			CreatedAt: sb.createdAt, Labels: sb.config.GetLabels()}
	}
	for sub := range s.subscribers {
		sub.push(ev)
	}
}

// GetContainerEvents streams container events until the client goes away
// or the server stops.
func (s *Server) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	sub := &subscriber{ready: make(chan struct{}, 1)}
	s.mu.Lock()
	s.subscribers[sub] = true
	s.mu.Unlock()
	// The headers tell the client it is subscribed: what happens after
	// it has them, it will hear of (a test waits for them; so may a
	// kubelet).
	if err := stream.SendHeader(nil); err != nil {
		s.mu.Lock()
		delete(s.subscribers, sub)
		s.mu.Unlock()
		return err
	}
	defer func() {
		s.mu.Lock()
		delete(s.subscribers, sub)
		s.mu.Unlock()
	}()
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-sub.ready:
		}
		for _, ev := range sub.take() {
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}
