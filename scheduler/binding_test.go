package scheduler

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/scheduler/explanation"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
	"github.com/mkube/mkube/scheduler/queue"
)

func TestBinding(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         string
		wantAssumed  bool // still counted on the node afterwards
		wantBindings int
	}{
		{"a successful binding keeps the pod assumed until the informer confirms it",
			http.StatusCreated, `{"kind":"Status","apiVersion":"v1","status":"Success","code":201}`, true, 1},
		{"a pod already bound elsewhere (409) is forgotten and dropped",
			http.StatusConflict, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,"message":"pod web-1 is already assigned to node \"node02\""}`, false, 1},
		{"a pod deleted meanwhile (404) is forgotten and dropped",
			http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, false, 1},
		{"a failing API server (500) makes the scheduler forget the assumption",
			http.StatusInternalServerError, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","code":500}`, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var bindings []map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/namespaces/default/pods/web-1/binding" || r.Method != http.MethodPost {
					w.WriteHeader(http.StatusCreated) // events and status patches
					w.Write([]byte(`{}`))
					return
				}
				var b map[string]any
				json.NewDecoder(r.Body).Decode(&b)
				mu.Lock()
				bindings = append(bindings, b)
				mu.Unlock()
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			s, err := New(Config{Client: client.New(srv.URL, "test"), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			s.cache.AddNode(st.MakeNode("node01").Allocatable("4", "8Gi").Obj())
			pod := st.MakePod("web-1").Req("1", "").Obj()
			p := &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod)}
			assumed := pod.DeepCopy()
			assumed.Spec.NodeName = "node01"
			if err := s.cache.AssumePod(framework.NewPodInfo(assumed)); err != nil {
				t.Fatal(err)
			}

			s.bindAsync(context.Background(), p, framework.NewPodInfo(assumed), framework.NewCycleState(),
				scheduleResult{SuggestedHost: "node01", NumNodes: 1, EvaluatedNodes: 1, FeasibleNodes: 1}, false)
			s.apiCalls.Wait()

			if got := s.cache.IsAssumedPod(pod); got != tt.wantAssumed {
				t.Errorf("assumed = %v, want %v", got, tt.wantAssumed)
			}
			if len(bindings) != tt.wantBindings {
				t.Fatalf("%d bindings posted", len(bindings))
			}
			b := bindings[0]
			meta, target := b["metadata"].(map[string]any), b["target"].(map[string]any)
			if b["apiVersion"] != "v1" || b["kind"] != "Binding" || meta["name"] != "web-1" || meta["uid"] != "uid-web-1" ||
				target["kind"] != "Node" || target["name"] != "node01" {
				t.Errorf("binding body = %v", b)
			}
			annotations, _ := meta["annotations"].(map[string]any)
			if got, _ := annotations[explanation.AnnotationKey].(string); got != `{"node":"node01","nodes":1,"evaluated":1,"feasible":1}` {
				t.Errorf("explanation annotation = %q", got)
			}
			if c := s.queue.Counts(); c != (queue.Counts{}) {
				t.Errorf("queue = %+v, want the pod not requeued (the informer has not seen it)", c)
			}
		})
	}
}
