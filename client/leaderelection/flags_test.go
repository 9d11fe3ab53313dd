package leaderelection

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/mkube/mkube/client"
)

// TestFlags: Kubernetes' defaults, and --leader-elect=false runs the work
// at once, without a Lease (the client points nowhere: a request would
// fail).
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("scheduler", flag.ContinueOnError)
	f := AddFlags(fs, "kube-scheduler")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := Flags{LeaderElect: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		ResourceNamespace: "kube-system", ResourceName: "kube-scheduler"}
	if *f != want {
		t.Errorf("defaults %+v, want %+v", *f, want)
	}
	if err := fs.Parse([]string{"--leader-elect=false"}); err != nil {
		t.Fatal(err)
	}
	ran := false
	err := f.Run(context.Background(), client.New("http://127.0.0.1:1", "test"), nil, nil, func(context.Context) error { ran = true; return nil })
	if err != nil || !ran {
		t.Errorf("with --leader-elect=false: ran %v, err %v; want the work run at once", ran, err)
	}
}
