package authentication

import (
	"crypto/sha256"
	"crypto/x509"
	"slices"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// certCache remembers the client certificate chains the CA vouched for,
// so that each is verified once, not at every request: a component sends
// thousands of requests a second over one HTTP/2 connection, and checking
// a P-256 signature chain costs about 100 µs, a fifth of the API server's
// CPU in `make bench-scheduling` on the secure port. An entry is good
// until the first certificate of its chain expires; only successes are
// kept. The CA does not change while the server runs, so nothing else
// makes an entry stale.
type certCache struct {
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]certEntry
}

type certEntry struct {
	user    authenticationv1.UserInfo
	expires time.Time
}

// certCacheSize bounds the cache: a cluster's components and nodes are a
// few thousand certificates at most; past that the cache starts over,
// which costs one verification per certificate.
const certCacheSize = 4096

// key is the chain's digest: the same leaf sent with other intermediates
// is another chain.
func chainKey(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	for _, c := range certs {
		h.Write(c.Raw)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *certCache) get(k [sha256.Size]byte, now time.Time) (authenticationv1.UserInfo, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return authenticationv1.UserInfo{}, false
	}
	u := e.user
	u.Groups = slices.Clone(u.Groups) // each request's own: a handler may append to them
	return u, true
}

// put keeps a verified chain's user until the chain's first expiry.
func (c *certCache) put(k [sha256.Size]byte, chains [][]*x509.Certificate, u authenticationv1.UserInfo) {
	var expires time.Time
	for _, chain := range chains {
		for _, cert := range chain {
			if expires.IsZero() || cert.NotAfter.Before(expires) {
				expires = cert.NotAfter
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= certCacheSize {
		c.entries = map[[sha256.Size]byte]certEntry{}
	}
	c.entries[k] = certEntry{user: u, expires: expires}
}
