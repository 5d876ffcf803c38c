package sim

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// finish is why a request ended.
type finish uint8

const (
	finNone finish = iota
	finLength
	finStop
	finAbort
)

func (f finish) String() string {
	switch f {
	case finLength:
		return "length"
	case finStop:
		return "stop"
	case finAbort:
		return "abort"
	}
	return ""
}

// Request states, engine goroutine only.
const (
	stNew uint8 = iota
	stWaiting
	stRunning
	stDone
)

// request is one generation (or embedding) request on its way through the
// engine. The handler fills the first block and submits it; the engine
// publishes progress in out and signals notify; the handler takes what is
// new and writes it.
type request struct {
	promptIDs []int
	keys      []uint64 // page keys of the prompt's full pages
	chain     uint64   // hash chain state after the prompt
	maxNew    int
	ignoreEOS bool
	embed     bool // prefill only
	seed      uint64
	// text picks the reply's words (its seed is seed; the engine sets
	// where it diverges before the first token); divergeOver, >= 0 for
	// the diverge fault, is the requests running at once above which it
	// diverges.
	text        textSeed
	divergeOver int
	// greedy: temperature 0, so the seed is the prompt's and the reply
	// stops where the prompt's own draw says (deterministic).
	greedy bool

	notify  chan struct{} // capacity 1: "out changed"
	aborted atomic.Bool

	submitted time.Time // when submit took it, on the engine's clock

	// Engine goroutine only.
	state  uint8
	need   int // KV tokens reserved while running
	cached int
	limit  int // tokens it will generate
	stop   bool
	// generated, verify and rng belong to the engine, or in lockstep,
	// after the first token, to the writer until selfStep hands r back.
	generated int
	verify    int
	rng       *rand.Rand

	mu  sync.Mutex
	out progress
}

// progress is what the engine has done for a request, guarded by mu.
type progress struct {
	cached                   int
	prefillStart, prefillEnd time.Time
	avail, taken             int // tokens generated; tokens taken by the writer
	verify                   int // decode steps it took part in
	done                     bool
	reason                   finish
}

func newRequest(ids []int, maxNew int, ignoreEOS, embed bool, pageSize int, seed uint64) *request {
	r := &request{
		promptIDs: ids, maxNew: maxNew, ignoreEOS: ignoreEOS, embed: embed, seed: seed,
		text: textSeed{seed: seed, at: -1}, divergeOver: -1,
		notify: make(chan struct{}, 1),
	}
	r.keys, r.chain = pageKeys(make([]uint64, 0, len(ids)/pageSize), 0, 0, ids, pageSize)
	r.need = len(ids) + maxNew
	return r
}

// take returns the tokens generated since the last take, [from, from+n),
// and a copy of the progress.
func (r *request) take() (from, n int, p progress) {
	r.mu.Lock()
	from, n = r.out.taken, r.out.avail-r.out.taken
	r.out.taken = r.out.avail
	p = r.out
	r.mu.Unlock()
	return from, n, p
}

func (r *request) signal() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// fifo is the waiting queue: a slice with a moving head.
type fifo struct {
	s    []*request
	head int
}

func (q *fifo) len() int          { return len(q.s) - q.head }
func (q *fifo) at(i int) *request { return q.s[q.head+i] }
func (q *fifo) push(r *request)   { q.s = append(q.s, r) }

// drop removes the first n, moving the rest down once the dead head is
// more than half the slice (amortised O(1) per request).
func (q *fifo) drop(n int) {
	clear(q.s[q.head : q.head+n])
	q.head += n
	if q.head > 64 && q.head*2 > len(q.s) {
		m := copy(q.s, q.s[q.head:])
		clear(q.s[m:])
		q.s, q.head = q.s[:m], 0
	}
}

func (q *fifo) remove(r *request) {
	for i := q.head; i < len(q.s); i++ {
		if q.s[i] == r {
			copy(q.s[i:], q.s[i+1:])
			q.s[len(q.s)-1] = nil
			q.s = q.s[:len(q.s)-1]
			return
		}
	}
}
