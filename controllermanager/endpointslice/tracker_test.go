package endpointslice

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestTheTrackerHoldsSyncsUntilTheCacheShowsOurWrites(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	cache := map[string]bool{"default/web-old": true}
	held := map[string]bool{} // cached, terminating: a finalizer holds them
	has := func(k string) (present, terminating bool) { return cache[k] || held[k], held[k] }
	tr := newTracker(clk)

	if behind, _ := tr.behind("default/web", has); behind {
		t.Fatal("a Service with no writes in flight is not behind")
	}
	tr.expect("default/web", []string{"default/web-new"}, []string{"default/web-old"})
	if behind, wait := tr.behind("default/web", has); !behind || wait != trackerTTL {
		t.Fatalf("behind right after our writes: %v, recheck after %v", behind, wait)
	}
	cache["default/web-new"] = true // the create's event
	if behind, _ := tr.behind("default/web", has); !behind {
		t.Fatal("still behind: the deleted slice is still cached")
	}
	delete(cache, "default/web-old") // the delete's event
	if behind, _ := tr.behind("default/web", has); behind {
		t.Fatal("the cache shows both writes: not behind")
	}

	// A created slice deleted by somebody else before we saw it will
	// never show: its DELETED event settles it.
	tr.expect("default/web", []string{"default/web-gone"}, nil)
	tr.deletedSlice("default/web", "default/web-gone")
	if behind, _ := tr.behind("default/web", has); behind {
		t.Fatal("a created slice that was deleted is not awaited")
	}

	// A slice we deleted that a finalizer holds is as good as gone.
	held["default/web-held"] = true
	tr.expect("default/web", nil, []string{"default/web-held"})
	if behind, _ := tr.behind("default/web", has); behind {
		t.Fatal("a deleted slice shown terminating is not awaited")
	}

	// A lost event: after the TTL the cache is trusted again.
	tr.expect("default/web", []string{"default/web-lost"}, nil)
	clk.SetTime(clk.Now().Add(trackerTTL - time.Second))
	if behind, wait := tr.behind("default/web", has); !behind || wait != time.Second {
		t.Fatalf("before the TTL: behind %v, recheck after %v", behind, wait)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if behind, _ := tr.behind("default/web", has); behind {
		t.Fatal("after the TTL the tracker gives up")
	}
}
