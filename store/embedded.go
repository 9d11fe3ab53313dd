package store

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
)

// EmbeddedOptions configures the etcd member the API server runs in its
// own process when no external cluster is given: alone (the default), or
// one member of a cluster of several, as kubeadm's stacked topology and
// k3s's embedded etcd run one member beside each API server.
type EmbeddedOptions struct {
	// DataDir holds etcd's WAL and bolt database; it survives restarts.
	DataDir string
	// ClientURL, if set, also serves etcd's gRPC API there, so learners can
	// point etcdctl at it. Empty means no client port at all: the API server
	// talks to etcd in-process, which is why clusters can run side by side.
	ClientURL string
	// AdvertiseClientURL is the client URL the member tells the others and
	// etcdctl (member list); "" is ClientURL, with 0.0.0.0 as 127.0.0.1.
	AdvertiseClientURL string

	// Cluster is set to make this member one of several; zero is a
	// single member.
	Cluster ClusterOptions
}

// ClusterOptions are etcd's own flags for forming or joining a cluster
// (etcd --name, --initial-cluster, ...): every member is started with the
// same InitialCluster, and Raft elects a leader once a majority of them
// talk to each other.
type ClusterOptions struct {
	// Name is this member's name in InitialCluster (etcd --name).
	Name string
	// InitialCluster is every member, NAME=PEER-URL,... (etcd
	// --initial-cluster), e.g.
	// "cp1=http://cp1:2380,cp2=http://cp2:2380,cp3=http://cp3:2380".
	InitialCluster string
	// InitialClusterState is "new" when the members form the cluster
	// together, "existing" when this one joins a running cluster that
	// already has it as a member (etcdctl member add).
	InitialClusterState string
	// InitialClusterToken keeps members of two clusters with the same
	// peer URLs from joining each other (etcd --initial-cluster-token).
	InitialClusterToken string
	// ListenPeerURL is where the member listens for its peers (etcd
	// --listen-peer-urls), e.g. http://0.0.0.0:2380; AdvertisePeerURL is
	// how the peers reach it (--initial-advertise-peer-urls), which must be
	// its URL in InitialCluster ("": ListenPeerURL).
	ListenPeerURL, AdvertisePeerURL string
}

// Embedded is a running in-process etcd and a client wired straight to it.
type Embedded struct {
	etcd   *embed.Etcd
	Client *clientv3.Client
}

// readyTimeout bounds the wait for the member to serve: a member of a
// cluster waits for a majority of its peers, which start in any order, so
// it is as long as it takes a learner to start the others by hand.
const readyTimeout = 2 * time.Minute

// StartEmbedded starts etcd in this process and waits until it can serve:
// alone at once, in a cluster once a majority of members has elected a
// leader and this member has published itself to them.
func StartEmbedded(opts EmbeddedOptions) (*Embedded, error) {
	cfg := embed.NewConfig()
	cfg.Dir = opts.DataDir
	cfg.Logger = "zap"
	// etcd logs an error for each listener it closes on shutdown; real
	// failures reach mkube as errors from the client, so only fatal ones
	// are worth etcd's own log.
	cfg.LogLevel = "fatal"
	cfg.ListenClientUrls = nil
	cfg.AdvertiseClientUrls = nil
	if opts.Cluster.InitialCluster == "" {
		singleMember(cfg)
	} else if err := clusterMember(cfg, opts.Cluster); err != nil {
		return nil, err
	}
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
		if opts.AdvertiseClientURL != "" {
			a, err := url.Parse(opts.AdvertiseClientURL)
			if err != nil {
				return nil, fmt.Errorf("parse etcd advertise client url: %w", err)
			}
			adv = *a
		}
		cfg.AdvertiseClientUrls = []url.URL{adv}
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(readyTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd: not ready after %s (in a cluster: is a majority of the members in --etcd-initial-cluster running?)", readyTimeout)
	}
	return &Embedded{etcd: e, Client: v3client.New(e.Server)}, nil
}

// singleMember sets up a member that never dials a peer.
func singleMember(cfg *embed.Config) {
	// Port 0 lets the kernel pick the peer port: a single member never
	// dials a peer, and fixed ports would stop two clusters sharing a host.
	peer, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	// A single member elects itself after its first election timeout,
	// counted in raft ticks: 10 ms ticks (etcd's default is 100 ms) make
	// that wait, most of the API server's start, ten times shorter. With
	// no peers there is no network round trip for the shorter ticks to
	// outrun.
	cfg.TickMs, cfg.ElectionMs = 10, 100
}

// clusterMember sets up one member of a cluster. It keeps etcd's own
// timing, a 100 ms heartbeat and a 1 s election timeout: a follower that
// hears no heartbeat for 1 s calls an election, which is the time a
// cluster is without a leader after its leader dies.
func clusterMember(cfg *embed.Config, c ClusterOptions) error {
	if c.Name == "" || c.ListenPeerURL == "" {
		return fmt.Errorf("an etcd cluster member needs --etcd-name and --etcd-listen-peer-urls")
	}
	listen, err := url.Parse(c.ListenPeerURL)
	if err != nil {
		return fmt.Errorf("parse etcd listen peer url: %w", err)
	}
	advertise := listen
	if c.AdvertisePeerURL != "" {
		if advertise, err = url.Parse(c.AdvertisePeerURL); err != nil {
			return fmt.Errorf("parse etcd advertise peer url: %w", err)
		}
	}
	if !strings.Contains(","+c.InitialCluster, ","+c.Name+"="+advertise.String()) {
		return fmt.Errorf("--etcd-initial-cluster %q has no %s=%s: a member must be listed under its name at its advertised peer URL",
			c.InitialCluster, c.Name, advertise)
	}
	cfg.Name = c.Name
	cfg.ListenPeerUrls = []url.URL{*listen}
	cfg.AdvertisePeerUrls = []url.URL{*advertise}
	cfg.InitialCluster = c.InitialCluster
	if c.InitialClusterToken != "" {
		cfg.InitialClusterToken = c.InitialClusterToken
	}
	switch c.InitialClusterState {
	case "", embed.ClusterStateFlagNew:
		cfg.ClusterState = embed.ClusterStateFlagNew
	case embed.ClusterStateFlagExisting:
		cfg.ClusterState = embed.ClusterStateFlagExisting
	default:
		return fmt.Errorf("--etcd-initial-cluster-state %q: want new or existing", c.InitialClusterState)
	}
	return nil
}

// Close stops the client, then etcd.
func (e *Embedded) Close() {
	e.Client.Close()
	e.etcd.Close()
}
