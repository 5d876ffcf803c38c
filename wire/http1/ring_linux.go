//go:build linux

package http1

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"benchserve/wire/netstamp"
	"benchserve/wire/uring"

	"golang.org/x/sys/unix"
)

// The ring loop is the event loop's reading through io_uring (issue 33):
// a socket whose response is awaited has one multishot recvmsg armed in
// the loop's ring, and each read the kernel makes lands in a provided
// buffer with its own SCM_TIMESTAMPNS. The kernel makes those reads only
// when the loop's thread asks (deferred task work), all of the ready
// sockets' at once in one io_uring_enter, instead of one recvmsg per
// socket. The loop's goroutine owns its ring (locked to its thread, the
// ring's only submitter) and waits in the ring itself, in io_uring_enter,
// which the kernel wakes at the first read to make. (Waiting in Go's
// poller instead, on an eventfd the ring signals, measured 10-26 ms late
// on 6.18: the kernel defers that signal.) Other goroutines hand it
// sockets to arm through a queue and an eventfd the ring polls. Writes
// and their waits stay with the epoll loop (sock.write). A response's end
// cancels its read, and the socket goes back to its request only once
// the read's last completion has come, so that no read outlives its
// request.

// ringLoop is one ring and the goroutine that owns it.
type ringLoop struct {
	ring *uring.Ring
	bufs *uring.BufRing
	msg  unix.Msghdr // the control space each read's buffer starts with
	efd  int         // written to hand sockets over; the ring polls it

	mu    sync.Mutex
	queue []*sock // to arm, from receive
	spare []*sock

	broken atomic.Pointer[error]
}

const (
	ringBuffers   = 512     // provided buffers a ring's reads land in
	ringBufSize   = 2 << 10 // a read's buffer: header, time, then up to 2 KiB less 48 of data
	cancelTag     = 1 << 63 // a cancellation's own completion
	wakeTag       = 1 << 62 // the eventfd's poll
	controlSpaceN = 16      // a struct timespec
)

// ringControl is the control space of one SCM_TIMESTAMPNS message.
var ringControl = uint32(unix.CmsgSpace(controlSpaceN))

var rings struct {
	once sync.Once
	l    []*ringLoop
	err  error
	next atomic.Uint32
}

// ringLoops starts the ring loops on first use, one per processor, or
// says why there are none: io_uring missing, disabled or too old
// (uring.Available), or the epoll loops, which wait for writes, missing.
func ringLoops() error {
	rings.once.Do(func() {
		if err := ringAvailable(); err != nil {
			rings.err = err
			return
		}
		if err := eventLoops(); err != nil {
			rings.err = err
			return
		}
		for range max(1, runtime.GOMAXPROCS(0)) {
			l, err := newRingLoop()
			if err != nil {
				rings.err = fmt.Errorf("no io_uring loop: %w", err)
				return
			}
			rings.l = append(rings.l, l)
		}
	})
	return rings.err
}

// ringAvailable is uring.Available (a test's stand-in for a machine
// without io_uring replaces it).
var ringAvailable = uring.Available

func nextRing() *ringLoop { return rings.l[int(rings.next.Add(1))%len(rings.l)] }

// newRingLoop starts a loop: its goroutine sets the ring up on its own
// thread and reports how that went.
func newRingLoop() (*ringLoop, error) {
	l := &ringLoop{}
	l.msg.SetControllen(int(ringControl))
	ready := make(chan error)
	go l.run(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return l, nil
}

func (l *ringLoop) setUp() error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return os.NewSyscallError("eventfd", err)
	}
	l.efd = efd
	if l.ring, err = uring.New(256, 4096); err != nil {
		unix.Close(efd)
		return err
	}
	if l.bufs, err = l.ring.NewBufRing(0, ringBuffers, ringBufSize); err == nil {
		l.poll()
		err = l.ring.Submit()
	}
	if err != nil {
		l.ring.Close()
		unix.Close(efd)
		return err
	}
	return nil
}

// run owns the ring: it arms the sockets handed over, waits in the ring
// until some read is to be made, and hands the reads' bytes on. Should
// the ring fail, the loop stops, failing its sockets' requests.
func (l *ringLoop) run(ready chan<- error) {
	runtime.LockOSThread() // the ring's only submitter, for good
	err := l.setUp()
	ready <- err
	if err != nil {
		return
	}
	for {
		l.arm()
		// A blocking system call: the runtime hands the processor on
		// while it waits.
		// (It makes the reads that wait, up to the kernel's batch, and
		// returns at once when it made any.)
		if err := l.ring.Wait(); err != nil {
			l.fail(err)
			return
		}
		l.harvest()
	}
}

// poll queues the eventfd's poll, by which a socket handed over wakes the
// loop.
func (l *ringLoop) poll() {
	for l.ring.PollMultishot(l.efd, wakeTag) == uring.ErrFull {
		l.ring.Submit() //nolint:errcheck // a broken ring fails at the next Wait
	}
}

// arm queues a read on every socket handed over.
func (l *ringLoop) arm() {
	l.mu.Lock()
	l.queue, l.spare = l.spare[:0], l.queue
	l.mu.Unlock()
	for i, s := range l.spare {
		l.read(s)
		l.spare[i] = nil
	}
}

func tag(s *sock) uint64 { return uint64(uint32(s.fd)) | uint64(s.gen)<<32 }

// read queues s's multishot read, submitting what is queued first when
// the queue is full (the next Wait or Collect submits the rest).
func (l *ringLoop) read(s *sock) {
	for l.ring.RecvmsgMultishot(s.fd, &l.msg, 0, tag(s)) == uring.ErrFull {
		l.ring.Submit() //nolint:errcheck // a broken ring fails at the next Wait
	}
}

func (l *ringLoop) cancel(s *sock) {
	for l.ring.Cancel(tag(s), tag(s)|cancelTag) == uring.ErrFull {
		l.ring.Submit() //nolint:errcheck // a broken ring fails at the next Wait
	}
}

// harvest hands on every completion waiting and returns how many there
// were.
func (l *ringLoop) harvest() int {
	total := 0
	for {
		cqes := l.ring.Completions()
		if len(cqes) == 0 {
			return total
		}
		for i := range cqes {
			l.complete(&cqes[i])
		}
		l.bufs.Publish()
		l.ring.Done(len(cqes))
		total += len(cqes)
	}
}

// complete hands on one completion: a read's bytes, the end of the
// stream, or the end of the read itself.
func (l *ringLoop) complete(c *uring.CQE) {
	id, hasBuf := c.Buffer()
	var payload, control []byte
	if hasBuf {
		defer l.bufs.Give(id)
		out, ok := uring.ParseRecvmsg(l.bufs.Buf(id), c.Res, 0, ringControl)
		if !ok {
			hasBuf = false
		}
		payload, control = out.Payload, out.Control
	}
	if c.UserData&cancelTag != 0 {
		return
	}
	if c.UserData&wakeTag != 0 {
		var n [8]byte
		unix.Read(l.efd, n[:]) //nolint:errcheck // empty already: nothing to do
		if !c.More() {
			l.poll()
		}
		return
	}
	s := socks.get(int(uint32(c.UserData)))
	if s == nil || s.gen != uint32(c.UserData>>32) || s.ring != l {
		return // not possible while reads end before their sockets close
	}
	more := c.More()
	switch s.state.Load() {
	case sockRingReading:
		x := s.x
		switch {
		case hasBuf && len(payload) > 0:
			if x.received(payload, time.Now(), netstamp.ReceiveTime(control)) {
				if !more {
					l.release(s)
					return
				}
				s.state.Store(sockDraining)
				l.cancel(s)
				return
			}
		case hasBuf: // the end of the stream
			s.eof = true
			x.closed(nil)
			l.drained(s, more)
			return
		case c.Res < 0 && c.Res != -int32(syscall.ENOBUFS):
			x.closed(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvmsg", syscall.Errno(-c.Res))})
			l.drained(s, more)
			return
		}
		if !more { // out of buffers (the bytes wait in the socket), or the kernel's own end: read on
			l.read(s)
		}
	case sockDraining:
		if hasBuf {
			if len(payload) > 0 {
				s.dirty = true // bytes past the response's end: the connection is not reused
			} else {
				s.eof = true
			}
		}
		if !more {
			l.release(s)
		}
	}
}

// drained releases s once its read has ended (no more completions), or
// cancels the read and waits for its end.
func (l *ringLoop) drained(s *sock, more bool) {
	if !more {
		l.release(s)
		return
	}
	s.state.Store(sockDraining)
	l.cancel(s)
}

// release lets s's request go on.
func (l *ringLoop) release(s *sock) {
	s.state.Store(sockIdle)
	x := s.x
	s.x = nil
	go x.resumeFn()
}

// watch hands s to the loop for x's response.
func (l *ringLoop) watch(s *sock) error {
	if b := l.broken.Load(); b != nil {
		return *b
	}
	s.state.Store(sockRingReading)
	l.mu.Lock()
	l.queue = append(l.queue, s)
	l.mu.Unlock()
	// A loop that broke meanwhile may not have seen s: whichever of it
	// and this takes s back fails the request.
	if b := l.broken.Load(); b != nil && s.state.CompareAndSwap(sockRingReading, sockIdle) {
		return *b
	}
	var one uint64 = 1
	_, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(l.efd), uintptr(unsafe.Pointer(&one)), 8)
	if errno != 0 && errno != syscall.EAGAIN { // EAGAIN: the count is full, the loop awake anyway
		return os.NewSyscallError("write", errno)
	}
	return nil
}

// fail stops l for good: each request it reads ends with err, and any
// socket handed to it from now on is refused.
func (l *ringLoop) fail(err error) {
	err = &net.OpError{Op: "read", Net: "tcp", Err: err}
	l.broken.Store(&err)
	tab := socks.tab.Load()
	if tab == nil {
		return
	}
	for i := range *tab {
		s := (*tab)[i].Load()
		if s == nil || s.ring != l {
			continue
		}
		if s.state.CompareAndSwap(sockRingReading, sockIdle) {
			s.x.closed(err)
			x := s.x
			s.x = nil
			go x.resumeFn()
		} else if s.state.CompareAndSwap(sockDraining, sockIdle) {
			s.dirty = true
			x := s.x
			s.x = nil
			go x.resumeFn()
		}
	}
}
