package leaderelection

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/client"
)

func TestConfigRules(t *testing.T) {
	c := client.New("http://127.0.0.1:1", "test")
	ok := Config{Client: c, Namespace: "kube-system", Name: "kube-scheduler", Identity: "host_1"}
	with := func(f func(*Config)) Config { cfg := ok; f(&cfg); return cfg }
	for _, tt := range []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"Kubernetes' defaults fill what is left zero", ok, ""},
		{"the e2e tests' short lease: 3s, 2s, 500ms", with(func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
		}), ""},
		{"a lease no longer than the renew deadline lets two lead", with(func(c *Config) { c.LeaseDuration = 10 * time.Second }), "lease duration 10s must be greater than renew deadline 10s"},
		{"the lease counts in whole seconds, as the Lease stores it", with(func(c *Config) { c.LeaseDuration, c.RenewDeadline = 2500*time.Millisecond, 2100*time.Millisecond }),
			"lease duration 2s must be greater than renew deadline 2.1s"},
		{"a renew deadline must leave room for more than one jittered try", with(func(c *Config) { c.RetryPeriod = 9 * time.Second }), "renew deadline 10s must be greater than 1.2 × retry period 9s"},
		{"no identity", with(func(c *Config) { c.Identity = "" }), "no identity"},
		{"no Lease name", with(func(c *Config) { c.Name = "" }), "namespace and a name"},
		{"no client", with(func(c *Config) { c.Client = nil }), "no client"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New: %v, want an error with %q", err, tt.wantErr)
			case tt.wantErr == "" && tt.cfg.LeaseDuration == 0:
				if e.cfg.LeaseDuration != 15*time.Second || e.cfg.RenewDeadline != 10*time.Second || e.cfg.RetryPeriod != 2*time.Second {
					t.Errorf("defaults %v %v %v, want 15s 10s 2s", e.cfg.LeaseDuration, e.cfg.RenewDeadline, e.cfg.RetryPeriod)
				}
			}
		})
	}
}

func TestJitterStaysWithinTwentyPercent(t *testing.T) {
	cfg := Config{RetryPeriod: 2 * time.Second}
	for range 1000 {
		if d := cfg.jittered(); d < 2*time.Second || d >= 2400*time.Millisecond {
			t.Fatalf("jittered wait %v, want in [2s, 2.4s)", d)
		}
	}
}

// TestIdentityIsHostnameUnderscoreUUID: holderIdentity as kube-scheduler
// writes it, and a new one per process.
func TestIdentityIsHostnameUnderscoreUUID(t *testing.T) {
	a, err := Identity()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Identity()
	if !regexp.MustCompile(`^[^_]+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("identity %q, want <hostname>_<uuid>", a)
	}
	if a == b {
		t.Errorf("two identities are the same, %q", a)
	}
}
