package store

import (
	"fmt"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
)

// EmbeddedOptions configures the single-member etcd that the API server runs
// in its own process when no external cluster is given.
type EmbeddedOptions struct {
	// DataDir holds etcd's WAL and bolt database; it survives restarts.
	DataDir string
	// ClientURL, if set, also serves etcd's gRPC API there, so learners can
	// point etcdctl at it. Empty means no client port at all: the API server
	// talks to etcd in-process, which is why clusters can run side by side.
	ClientURL string
}

// Embedded is a running in-process etcd and a client wired straight to it.
type Embedded struct {
	etcd   *embed.Etcd
	Client *clientv3.Client
}

// StartEmbedded starts etcd in this process and waits until it can serve.
func StartEmbedded(opts EmbeddedOptions) (*Embedded, error) {
	cfg := embed.NewConfig()
	cfg.Dir = opts.DataDir
	cfg.Logger = "zap"
	// etcd logs an error for each listener it closes on shutdown; real
	// failures reach mkube as errors from the client, so only fatal ones
	// are worth etcd's own log.
	cfg.LogLevel = "fatal"
	// Port 0 lets the kernel pick the peer port: a single member never
	// dials a peer, and fixed ports would stop two clusters sharing a host.
	peer, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.ListenClientUrls = nil
	cfg.AdvertiseClientUrls = nil
	// A single member elects itself after its first election timeout,
	// counted in raft ticks: 10 ms ticks (etcd's default is 100 ms) make
	// that wait, most of the API server's start, ten times shorter. With
	// no peers there is no network round trip for the shorter ticks to
	// outrun.
	cfg.TickMs, cfg.ElectionMs = 10, 100
	if opts.ClientURL != "" {
		u, err := url.Parse(opts.ClientURL)
		if err != nil {
			return nil, fmt.Errorf("parse etcd client url: %w", err)
		}
		cfg.ListenClientUrls = []url.URL{*u}
		adv := *u
		if adv.Hostname() == "0.0.0.0" { // listen everywhere, but advertise an address a client can dial
			adv.Host = "127.0.0.1:" + u.Port()
		}
		cfg.AdvertiseClientUrls = []url.URL{adv}
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd: not ready after 60s")
	}
	return &Embedded{etcd: e, Client: v3client.New(e.Server)}, nil
}

// Close stops the client, then etcd.
func (e *Embedded) Close() {
	e.Client.Close()
	e.etcd.Close()
}
