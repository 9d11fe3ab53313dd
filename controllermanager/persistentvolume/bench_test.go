package persistentvolume

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// BenchmarkBind binds 1,000 claims to 1,000 volumes: claim i asks for
// i Gi and volume i has i Gi, so each finds its own only after passing
// over the ones taken before it. It measures the binder itself — the
// matching over the whole store and the four writes of each binding — on
// the in-memory API server, not HTTP or etcd.
func BenchmarkBind(b *testing.B) {
	const n = 1000
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		w := newWorld(volumeplugin.Host{})
		var objs []runtime.Object
		for i := 1; i <= n; i++ {
			objs = append(objs, claim(fmt.Sprintf("c%04d", i), fmt.Sprintf("%dGi", i), rwo), volume(fmt.Sprintf("v%04d", i), fmt.Sprintf("%dGi", i), rwo))
		}
		w.add(objs...)
		w.refresh()
		claims := w.b.claims.list()
		b.StartTimer()
		start := time.Now()
		for _, pvc := range claims {
			if err := w.b.sync(context.Background(), item{claimItem, client.KeyOf(pvc)}); err != nil {
				b.Fatal(err)
			}
		}
		elapsed += time.Since(start)
		b.StopTimer()
		for _, pvc := range w.b.claims.list() {
			if pvc.Spec.VolumeName == "" {
				b.Fatalf("claim %s was not bound", pvc.Name)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "claims/s")
}
