package analysis

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"

	"github.com/extendeddaemonset/extendeddaemonset/api/v1alpha1"
)

// maxQueriers bounds the clients Queriers keeps: one per provider and
// credentials in use, and a cluster has few. Past it, the least recently
// used goes, so a stream of credential rotations cannot grow the cache.
const maxQueriers = 64

// Queriers keeps one Querier per provider and credentials, so that every
// reconcile of an analysis reuses one HTTP transport and its pooled
// connections instead of opening new ones. A client is keyed by everything
// it is built from: the address, the timeout as applied, TLS verification,
// and a hash of the credentials and CA, so that a rotated Secret gets a new
// client. At most maxQueriers are kept; an evicted client's idle
// connections are closed. The zero value is ready to use, and it is safe
// for concurrent use.
type Queriers struct {
	mu sync.Mutex
	// byKey finds an element of recent, whose front is the most recently
	// used client.
	byKey  map[querierKey]*list.Element
	recent list.List
}

// querierKey is what makes two clients different. The credentials are only
// hashed: the key is compared and kept, and need not hold secrets.
type querierKey struct {
	address            string
	timeout            time.Duration
	insecureSkipVerify bool
	credentials        [sha256.Size]byte
}

type cachedQuerier struct {
	key     querierKey
	querier *promQuerier
}

// Get returns the client of a provider with these credentials, building it
// as NewQuerier does the first time. A provider NewQuerier refuses is not
// kept.
func (qs *Queriers) Get(p v1alpha1.PrometheusProvider, c Credentials) (Querier, error) {
	key := querierKey{
		address:            p.Address,
		timeout:            timeoutOf(p),
		insecureSkipVerify: p.InsecureSkipVerify,
		credentials:        hashCredentials(c),
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if e, ok := qs.byKey[key]; ok {
		qs.recent.MoveToFront(e)
		return e.Value.(*cachedQuerier).querier, nil
	}
	// Building under the lock is cheap (no I/O) and spares concurrent
	// reconciles of one provider a client each.
	q, err := newPromQuerier(p, c)
	if err != nil {
		return nil, err
	}
	if qs.byKey == nil {
		qs.byKey = map[querierKey]*list.Element{}
	}
	qs.byKey[key] = qs.recent.PushFront(&cachedQuerier{key: key, querier: q})
	for qs.recent.Len() > maxQueriers {
		qs.evict(qs.recent.Back())
	}
	return q, nil
}

// evict forgets a client and closes its idle connections; a query it is
// running finishes, and its connection closes when the transport's idle
// timeout passes.
func (qs *Queriers) evict(e *list.Element) {
	cached := qs.recent.Remove(e).(*cachedQuerier)
	delete(qs.byKey, cached.key)
	cached.querier.transport.CloseIdleConnections()
}

// len is how many clients are kept.
func (qs *Queriers) len() int {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.recent.Len()
}

// hashCredentials hashes every field with its length, so that no two
// different credentials run together into the same bytes.
func hashCredentials(c Credentials) [sha256.Size]byte {
	h := sha256.New()
	for _, field := range [][]byte{[]byte(c.BearerToken), []byte(c.Username), []byte(c.Password), c.CA} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(field)))
		h.Write(field)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
