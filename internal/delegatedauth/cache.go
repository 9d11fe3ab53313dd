package delegatedauth

import (
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/utils/clock"
)

// answer is one cached review: the user a token names (nil: none), or
// whether access is allowed and why.
type answer struct {
	user    *authenticationv1.UserInfo
	allowed bool
	reason  string
	expires time.Time
}

// cache keeps answers by key until they expire; expired ones are dropped
// whenever an answer is added, so it holds at most a TTL's worth.
type cache struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	answers map[string]answer
}

func newCache(clk clock.PassiveClock) *cache {
	return &cache{clock: clk, answers: map[string]answer{}}
}

// get is key's unexpired answer, or ask's, kept for ttl(answer) (0: not
// kept). Errors are never kept: the next request asks again.
func (c *cache) get(key string, ttl func(answer) time.Duration, ask func() (answer, error)) (answer, error) {
	now := c.clock.Now()
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok && now.Before(a.expires) {
		return a, nil
	}
	a, err := ask()
	if err != nil {
		return answer{}, err
	}
	d := ttl(a)
	if d <= 0 {
		return a, nil
	}
	a.expires = now.Add(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, old := range c.answers {
		if !now.Before(old.expires) {
			delete(c.answers, k)
		}
	}
	c.answers[key] = a
	return a, nil
}
