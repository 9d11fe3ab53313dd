package deployment

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// deleteRecorder is an API server that only answers DELETEs, recording
// the name of each deleted ReplicaSet and the UID precondition it carried.
type deleteRecorder struct {
	mu      sync.Mutex
	deleted []string
	uids    map[string]types.UID
}

func (f *deleteRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/apis/apps/v1/namespaces/default/replicasets/"
	if r.Method != http.MethodDelete || !strings.HasPrefix(r.URL.Path, prefix) {
		http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
		return
	}
	var opts metav1.DeleteOptions
	json.NewDecoder(r.Body).Decode(&opts)
	name := strings.TrimPrefix(r.URL.Path, prefix)
	f.mu.Lock()
	f.deleted = append(f.deleted, name)
	if opts.Preconditions != nil && opts.Preconditions.UID != nil {
		f.uids[name] = *opts.Preconditions.UID
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
}

func TestCleanupHistory(t *testing.T) {
	// old builds an old ReplicaSet "rev<revision>" with spec and status replicas.
	old := func(revision, spec, status int32, mutate ...func(*appsv1.ReplicaSet)) *appsv1.ReplicaSet {
		name := "rev" + strconv.Itoa(int(revision))
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
				Annotations: map[string]string{revisionAnnotation: strconv.Itoa(int(revision))}},
			Spec:   appsv1.ReplicaSetSpec{Replicas: &spec},
			Status: appsv1.ReplicaSetStatus{Replicas: status},
		}
		for _, m := range mutate {
			m(rs)
		}
		return rs
	}
	deleting := func(rs *appsv1.ReplicaSet) { now := metav1.Now(); rs.DeletionTimestamp = &now }
	for _, tc := range []struct {
		name        string
		limit       int32
		old         []*appsv1.ReplicaSet
		wantDeleted []string
	}{
		{name: "as many idle old ReplicaSets as the limit are all kept",
			limit: 2, old: []*appsv1.ReplicaSet{old(1, 0, 0), old(2, 0, 0)}},
		{name: "the oldest revisions beyond the limit are deleted, whatever the order they come in",
			limit: 2, old: []*appsv1.ReplicaSet{old(4, 0, 0), old(1, 0, 0), old(3, 0, 0), old(2, 0, 0)},
			wantDeleted: []string{"rev1", "rev2"}},
		{name: "a limit of 0 deletes every idle old ReplicaSet",
			limit: 0, old: []*appsv1.ReplicaSet{old(1, 0, 0), old(2, 0, 0)},
			wantDeleted: []string{"rev1", "rev2"}},
		{name: "a ReplicaSet still scaled up is kept and does not count towards the limit",
			limit: 1, old: []*appsv1.ReplicaSet{old(1, 1, 1), old(2, 0, 0), old(3, 0, 0)},
			wantDeleted: []string{"rev2"}},
		{name: "a ReplicaSet scaled to 0 whose pods are still there is kept and does not count",
			limit: 1, old: []*appsv1.ReplicaSet{old(1, 0, 2), old(2, 0, 0), old(3, 0, 0)},
			wantDeleted: []string{"rev2"}},
		{name: "a ReplicaSet whose status does not describe its scale-down yet is kept and does not count, as its pods may still be there",
			limit: 1, old: []*appsv1.ReplicaSet{old(1, 0, 0, func(rs *appsv1.ReplicaSet) { rs.Generation = 2 }), old(2, 0, 0), old(3, 0, 0)},
			wantDeleted: []string{"rev2"}},
		{name: "a ReplicaSet already being deleted is not deleted again and does not count",
			limit: 1, old: []*appsv1.ReplicaSet{old(1, 0, 0, deleting), old(2, 0, 0), old(3, 0, 0)},
			wantDeleted: []string{"rev2"}},
		{name: "no old ReplicaSets, nothing to do",
			limit: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &deleteRecorder{uids: map[string]types.UID{}}
			srv := httptest.NewServer(api)
			defer srv.Close()
			c := &Controller{client: client.New(srv.URL, "deployment-test"), log: slog.New(slog.DiscardHandler)}
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
				Spec: appsv1.DeploymentSpec{RevisionHistoryLimit: &tc.limit}}

			if err := c.cleanupHistory(context.Background(), d, tc.old); err != nil {
				t.Fatalf("cleanupHistory: %v", err)
			}
			got := slices.Sorted(slices.Values(api.deleted))
			if !slices.Equal(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tc.wantDeleted)
			}
			for _, name := range got {
				if want := types.UID("uid-" + name); api.uids[name] != want {
					t.Errorf("the deletion of %s carried UID precondition %q, want %q (a new ReplicaSet of the same name must survive)",
						name, api.uids[name], want)
				}
			}
		})
	}
}
