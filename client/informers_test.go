package client_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// listCounter is an API server with nothing in it: it answers every list
// with an empty one and holds every watch open without events, and counts
// the lists by URL (path and query).
type listCounter struct {
	mu    sync.Mutex
	lists map[string]int
}

func (s *listCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("watch") == "true" {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // ends when the informer stops
		return
	}
	s.mu.Lock()
	s.lists[r.URL.String()]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "1"}})
}

func (s *listCounter) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.lists {
		out[k] = v
	}
	return out
}

func TestSharedInformersGiveEveryoneAskingForAResourceTheSameListWatch(t *testing.T) {
	api := &listCounter{lists: map[string]int{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	f := client.NewSharedInformers(client.New(srv.URL, "informers-test"), slog.New(slog.DiscardHandler))

	// Two controllers want pods, one wants nodes, and a kubelet wants only
	// the pods of its node.
	rsPods, epPods := f.For(client.Pods), f.For(client.Pods)
	nodes := f.For(client.Nodes)
	nodePods := f.ForSelection(client.Pods, "", client.ListOptions{FieldSelector: "spec.nodeName=node01"})
	if rsPods != epPods {
		t.Error("two For(Pods) calls returned different informers: each would list and watch pods on its own")
	}
	if nodes == rsPods || nodePods == rsPods {
		t.Error("another resource, or another selection of pods, got the informer of all pods")
	}
	if again := f.ForSelection(client.Pods, "", client.ListOptions{FieldSelector: "spec.nodeName=node01"}); again != nodePods {
		t.Error("the same selection asked for twice got two informers")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}) // closed when Run returns
	go func() { f.Run(ctx); close(done) }()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if !f.WaitForSync(wctx) {
		t.Fatal("the informers did not sync")
	}
	want := map[string]int{"/api/v1/pods": 1, "/api/v1/nodes": 1, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode01": 1}
	got := api.counts()
	for url, n := range want {
		if got[url] != n {
			t.Errorf("%s listed %d times, want %d; all lists: %v", url, got[url], n, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("lists %v, want %v", got, want)
	}

	t.Run("an informer asked for after Run panics rather than never running", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("For(Services) after Run returned an informer that nobody will run")
			}
		}()
		f.For(client.Services)
	})
	t.Run("an informer handed out before Run is still handed out after it", func(t *testing.T) {
		if f.For(client.Pods) != rsPods {
			t.Error("For(Pods) after Run returned a new informer")
		}
	})

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
