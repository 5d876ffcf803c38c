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
// ring's only submitter). It learns that reads wait from an edge-triggered
// epoll set of its sockets, never read with epoll_wait: the set's fd waits
// in Go's poller, as the epoll loop's does, and wakes the loop when a
// socket gets data. (The ring's own eventfd signal for deferred reads came
// 10-26 ms late on 6.18, and the ring's fd never polled readable for them;
// a thread blocked in io_uring_enter cost Go's scheduler more than the
// reads it saved.) Other goroutines hand it sockets to arm through a
// queue and an eventfd in the same set. Writes and their waits stay with
// the epoll loop (sock.write). A response's end cancels its read, and the
// socket goes back to its request only once the read's last completion
// has come, so that no read outlives its request.

// ringLoop is one ring and the goroutine that owns it.
type ringLoop struct {
	ring *uring.Ring
	bufs *uring.BufRing
	msg  unix.Msghdr // the control space each read's buffer starts with
	efd  int         // written to hand sockets over
	epfd int         // the sockets' readiness, and efd's
	file *os.File    // epfd, held open

	mu    sync.Mutex
	queue []*sock // to arm, from receive
	spare []*sock

	broken atomic.Pointer[error]
}

const (
	ringBuffers   = 512     // provided buffers a ring's reads land in
	ringBufSize   = 2 << 10 // a read's buffer: header, time, then up to 2 KiB less 48 of data
	cancelTag     = 1 << 63 // a cancellation's own completion
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

func (l *ringLoop) setUp() (syscall.RawConn, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	syscall.SetNonblock(epfd, true) //nolint:errcheck // a new fd
	l.epfd, l.file = epfd, os.NewFile(uintptr(epfd), "epoll")
	rc, err := l.file.SyscallConn()
	if err == nil {
		l.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err == nil {
			err = l.poll(l.efd)
			if err != nil {
				unix.Close(l.efd)
			}
		}
	}
	if err != nil {
		l.file.Close()
		return nil, err
	}
	if l.ring, err = uring.New(256, 4096); err == nil {
		if l.bufs, err = l.ring.NewBufRing(0, ringBuffers, ringBufSize); err != nil {
			l.ring.Close()
		}
	}
	if err != nil {
		unix.Close(l.efd)
		l.file.Close()
		return nil, err
	}
	return rc, nil
}

// poll adds fd to the loop's epoll set, edge-triggered.
func (l *ringLoop) poll(fd int) error {
	ev := syscall.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// run owns the ring: it arms the sockets handed over, has the kernel make
// the reads that wait and hands their bytes on, until nothing is left to
// do, then waits in Go's poller for its epoll set. Should the ring fail,
// the loop stops, failing its sockets' requests.
func (l *ringLoop) run(ready chan<- error) {
	runtime.LockOSThread() // the ring's only submitter, for good
	rc, err := l.setUp()
	ready <- err
	if err != nil {
		return
	}
	var failed error
	err = rc.Read(func(uintptr) bool {
		for {
			l.arm()
			if err := l.ring.Collect(ringBuffers); err != nil {
				failed = err
				return true
			}
			l.harvest()
			// Reads beyond the kernel's batch, or reads and
			// cancellations queued while handing bytes on: take them
			// before waiting. (A socket that gets data meanwhile wakes
			// the wait at once.)
			if !l.ring.Work() && !l.ring.Queued() {
				return false
			}
		}
	})
	if failed == nil {
		failed = fmt.Errorf("the io_uring loop's epoll fd: %w", err)
	}
	l.fail(failed)
	// Closing the ring ends its reads, which let their sockets go.
	l.ring.Close()
	l.bufs.Free()
}

// arm queues a read on every socket handed over.
func (l *ringLoop) arm() {
	l.mu.Lock()
	l.queue, l.spare = l.spare[:0], l.queue
	l.mu.Unlock()
	for i, s := range l.spare {
		l.read(s)
		if !s.polled { // once for its life: closing it takes it out
			if err := l.poll(s.fd); err == nil {
				s.polled = true
			}
		}
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
	var one uint64 = 1 // the eventfd wakes the loop; it is never read
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
