package store

import (
	"sync"
)

// journalLimit bounds each log of a Journal. Past it the older half is
// dropped; a reader that had not read it yet states everything again,
// which costs one full pass, as every pass did before the journal.
const journalLimit = 1 << 16

// Journal records which nodes changed, from the watch events the
// controllers receive: any node (its labels, taints, conditions), and the
// node of any pod of an ExtendedDaemonSet. A replica set pass reads what
// changed since its last pass and states those nodes again, rather than
// every node and pod of the cluster.
//
// An event is recorded by the handler that also queues the pass it wakes,
// after the informer's store shows the change: a pass that reads the
// journal, then the store, sees at least what the journal names.
type Journal struct {
	mu    sync.Mutex
	nodes changeLog
	pods  map[string]*changeLog
}

// changeLog is a window of a log of node names: entry i of names is entry
// base+i of the whole log.
type changeLog struct {
	base  uint64
	names []string
}

func (l *changeLog) add(name string) {
	if len(l.names) >= journalLimit {
		drop := len(l.names) / 2
		l.names = append(l.names[:0], l.names[drop:]...)
		l.base += uint64(drop)
	}
	l.names = append(l.names, name)
}

func (l *changeLog) end() uint64 { return l.base + uint64(len(l.names)) }

// since returns the names logged from position at on; false when some
// were dropped before they were read.
func (l *changeLog) since(at uint64) ([]string, bool) {
	if at < l.base {
		return nil, false
	}
	return l.names[at-l.base:], true
}

// Cursor is how far a reader has read a Journal for one
// ExtendedDaemonSet; the zero Cursor has read nothing.
type Cursor struct {
	nodes, pods uint64
	// read is false until the first read, which states every node.
	read bool
}

// NewJournal returns an empty Journal.
func NewJournal() *Journal {
	return &Journal{pods: map[string]*changeLog{}}
}

// NodeChanged records an event of node name.
func (j *Journal) NodeChanged(name string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.nodes.add(name)
}

// PodChanged records an event of a pod of the ExtendedDaemonSet named
// by owner ("<namespace>/<name>") on node.
func (j *Journal) PodChanged(owner, node string) {
	if node == "" {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	l := j.pods[owner]
	if l == nil {
		l = &changeLog{}
		j.pods[owner] = l
	}
	l.add(node)
}

// Forget drops the log of owner's pods, once the ExtendedDaemonSet is gone.
func (j *Journal) Forget(owner string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.pods, owner)
}

// Since returns the nodes changed for owner since c, each once, and the
// cursor past them. complete is false when c is the zero Cursor or the
// journal dropped entries c had not read: the reader must then state
// every node again.
func (j *Journal) Since(owner string, c Cursor) (changed map[string]bool, next Cursor, complete bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	pods := j.pods[owner]
	if pods == nil {
		pods = &changeLog{}
		j.pods[owner] = pods
	}
	next = Cursor{nodes: j.nodes.end(), pods: pods.end(), read: true}
	if !c.read {
		return nil, next, false
	}
	nodeNames, okNodes := j.nodes.since(c.nodes)
	podNodes, okPods := pods.since(c.pods)
	if !okNodes || !okPods {
		return nil, next, false
	}
	changed = make(map[string]bool, len(nodeNames)+len(podNodes))
	for _, n := range nodeNames {
		changed[n] = true
	}
	for _, n := range podNodes {
		changed[n] = true
	}
	return changed, next, true
}
