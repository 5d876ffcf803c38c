//go:build linux

package http1

import (
	"context"
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

	"golang.org/x/sys/unix"
)

// The event loop is the receiver of plain-HTTP responses on Linux. Go's
// poller, which the other receiver's connections read through, costs two reads per chunk when
// chunks come one at a time (the one that returns it, and one that finds
// the socket empty before the goroutine parks) and a goroutine switch. The
// loop waits for many sockets at once in one level-triggered epoll set,
// makes one recvmsg per ready socket per wake-up (keeping the kernel's
// receive time), and parses the bytes in place on its own goroutine; no
// goroutine of the request's waits meanwhile (machine.go). Its sockets are
// outside package net: dialled by net.Dialer, then taken over (dup'd, and
// the net.Conn closed), so that Go's poller never sees their readiness.

// sock is a connection the event loop reads.
type sock struct {
	fd     int
	gen    uint32 // tells a reused fd number from this socket in the loop's events
	key    string
	loop   *evloop
	state  atomic.Int32
	x      *Exchange // the request in progress
	added  bool      // in the loop's epoll set
	ring   *ringLoop // reads through this ring, not epoll (nil: epoll)
	polled bool      // in its ring loop's epoll set
	eof    bool      // the ring read the end of the stream after a response
	dirty  bool      // the ring read bytes past a response's end

	mu     sync.Mutex // closed against a context's shutdown
	closed bool
}

const (
	sockIdle        int32 = iota // the goroutine that holds it owns it
	sockWriting                  // its request waits for room to be written
	sockReading                  // the loop reads its response
	sockRingReading              // its ring loop reads its response
	sockDraining                 // its ring loop waits for the end of its read
)

// evloop is one epoll set and the goroutine that waits on it.
type evloop struct {
	epfd   int
	buf    []byte // every read lands here and is parsed before the next
	oob    [64]byte
	events [256]syscall.EpollEvent
	iov    syscall.Iovec
	msg    syscall.Msghdr
	file   *os.File // the epoll fd, held open
	// broken is the error the loop stopped with: its sockets' requests
	// fail with it, and no socket joins it.
	broken atomic.Pointer[error]
}

// recvBuffer is the loop's one read buffer: a read takes what has come,
// many chunks at once when they bunch.
const recvBuffer = 64 << 10

var loops struct {
	once sync.Once
	l    []*evloop
	err  error // why there are none
	next atomic.Uint32
	gen  atomic.Uint32
}

// eventLoops starts the event loops on first use, one per processor
// (GOMAXPROCS): a burst of chunks on many streams at once (a server's
// decode step) is read on every core, not one. It returns why there are
// none, when epoll fails.
func eventLoops() error {
	loops.once.Do(func() {
		for range max(1, runtime.GOMAXPROCS(0)) {
			l, err := newLoop()
			if err != nil {
				for _, l := range loops.l {
					l.file.Close()
				}
				loops.l, loops.err = nil, fmt.Errorf("no event loop: %w", err)
				return
			}
			loops.l = append(loops.l, l)
		}
	})
	return loops.err
}

// nextLoop is the loop a new socket joins: each in turn.
func nextLoop() *evloop { return loops.l[int(loops.next.Add(1))%len(loops.l)] }

func newLoop() (*evloop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// The epoll fd waits in Go's own poller, as a socket would: the
	// loop's goroutine parks there while nothing is ready, with no
	// thread blocked in epoll_wait (a blocking system call would keep
	// the runtime's monitor waking every 20 µs to retake its processor).
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, err
	}
	f := os.NewFile(uintptr(epfd), "epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &evloop{epfd: epfd, buf: make([]byte, recvBuffer), file: f}
	l.msg.Iov = &l.iov
	l.msg.Iovlen = 1
	l.msg.Control = &l.oob[0]
	go l.run(rc)
	return l, nil
}

// socks finds a socket by its fd for the loop.
var socks sockTable

type sockTable struct {
	mu  sync.Mutex
	tab atomic.Pointer[[]atomic.Pointer[sock]]
}

func (t *sockTable) set(fd int, s *sock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tab := t.tab.Load()
	if tab == nil || fd >= len(*tab) {
		n := 1024
		if tab != nil {
			n = len(*tab)
		}
		for n <= fd {
			n *= 2
		}
		nt := make([]atomic.Pointer[sock], n)
		if tab != nil {
			for i := range *tab {
				nt[i].Store((*tab)[i].Load())
			}
		}
		t.tab.Store(&nt)
		tab = &nt
	}
	(*tab)[fd].Store(s)
}

func (t *sockTable) get(fd int) *sock {
	tab := t.tab.Load()
	if tab == nil || fd < 0 || fd >= len(*tab) {
		return nil
	}
	return (*tab)[fd].Load()
}

// clear forgets s (closing its fd frees the number for another).
func (t *sockTable) clear(s *sock) {
	if tab := t.tab.Load(); tab != nil && s.fd < len(*tab) {
		(*tab)[s.fd].CompareAndSwap(s, nil)
	}
}

// run handles the ready sockets until none is, then waits in Go's poller
// for the epoll fd to become readable (some socket ready) again. Should
// the epoll fd fail, the loop stops, failing its sockets' requests.
func (l *evloop) run(rc syscall.RawConn) {
	var failed error
	err := rc.Read(func(uintptr) bool {
		for {
			// With a timeout of 0 it never blocks: a raw system call,
			// which the runtime does not count as one (see sock.write).
			// (Letting a busy loop look at most once per 500 µs tick,
			// to read more sockets per wake-up, cost more than it saved:
			// 19 against 10 µs a token at 100 streams, half the
			// throughput.)
			// epoll_pwait with no signal mask is epoll_wait, and it exists on
			// every Linux architecture (arm64 has no epoll_wait).
			r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
			n := int(r)
			if errno == syscall.EINTR {
				continue
			}
			if errno != 0 {
				failed = os.NewSyscallError("epoll_wait", errno) // a broken epoll fd: nothing can be read
				return true
			}
			if n == 0 {
				return false // wait
			}
			l.handle(l.events[:n])
		}
	})
	if failed == nil {
		failed = fmt.Errorf("the event loop's epoll fd: %w", err)
	}
	l.fail(failed)
}

// fail stops l for good: each request it reads ends with err, and any
// socket handed to it from now on is refused.
func (l *evloop) fail(err error) {
	err = &net.OpError{Op: "read", Net: "tcp", Err: err}
	l.broken.Store(&err)
	tab := socks.tab.Load()
	if tab == nil {
		return
	}
	for i := range *tab {
		s := (*tab)[i].Load()
		if s == nil || s.loop != l {
			continue
		}
		// watch takes a socket back the same way, when it sees the
		// loop broken: one of the two has it.
		if s.state.CompareAndSwap(sockReading, sockIdle) {
			s.x.closed(err)
			l.release(s)
		} else if s.state.Load() == sockWriting {
			select {
			case s.x.wake <- struct{}{}:
			default:
			}
		}
	}
}

func (l *evloop) handle(events []syscall.EpollEvent) {
	for i := range events {
		ev := &events[i]
		s := socks.get(int(ev.Fd))
		if s == nil || s.gen != uint32(ev.Pad) {
			continue // a socket closed since
		}
		switch s.state.Load() {
		case sockReading:
			l.read(s)
		case sockWriting:
			select { // a stale token is harmless: the writer tries again
			case s.x.wake <- struct{}{}:
			default:
			}
		}
	}
}

// read makes one recvmsg on the ready socket s and hands its bytes on.
// An event that finds nothing (one reported before an earlier handler
// in the batch read the bytes) is nothing.
func (l *evloop) read(s *sock) {
	x := s.x
	l.iov.Base = &l.buf[0]
	l.iov.SetLen(len(l.buf))
	l.msg.SetControllen(len(l.oob))
	r, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&l.msg)), syscall.MSG_DONTWAIT)
	switch {
	case errno == syscall.EAGAIN || errno == syscall.EINTR:
		return
	case errno != 0:
		x.closed(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvmsg", errno)})
	case r == 0:
		x.closed(nil)
	default:
		now := time.Now()
		ns := netstamp.ReceiveTime(l.oob[:l.msg.Controllen])
		if !x.received(l.buf[:r], now, ns) {
			return
		}
	}
	l.release(s)
}

// release takes s out of the epoll set and lets its request go on.
func (l *evloop) release(s *sock) {
	s.state.Store(sockIdle)
	syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, s.fd, nil) //nolint:errcheck // closed already: out of the set
	s.added = false
	x := s.x
	s.x = nil
	go x.resumeFn()
}

// receive hands s to its loop for x's response; resume follows its end.
func (s *sock) receive(x *Exchange) (bool, error) {
	x.wakeChan()
	s.x = x
	select { // a token from the write: the reader needs none
	case <-x.wake:
	default:
	}
	if s.ring != nil {
		if err := s.ring.watch(s); err != nil {
			s.x = nil
			return false, err
		}
		return true, nil
	}
	if err := s.loop.watch(s, sockReading); err != nil {
		s.x = nil
		return false, err
	}
	return true, nil
}

// watch hands s to the loop: for its response (read), or until it can be
// written (once). The loop acts on a socket's events by its state, and may
// hold events reported before: a reader's state is set once the socket is
// in the set (an event before is ignored, and reported again, since the
// set is level-triggered), a writer's before (a one-shot event must not
// be missed; an early one wakes the writer to try again).
func (l *evloop) watch(s *sock, state int32) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(s.fd), Pad: int32(s.gen)}
	if state == sockWriting {
		ev.Events = syscall.EPOLLOUT | syscall.EPOLLONESHOT
		s.state.Store(state)
	}
	op := syscall.EPOLL_CTL_ADD
	if s.added {
		op = syscall.EPOLL_CTL_MOD
	}
	if b := l.broken.Load(); b != nil {
		s.state.Store(sockIdle)
		return *b
	}
	if err := syscall.EpollCtl(l.epfd, op, s.fd, &ev); err != nil {
		s.state.Store(sockIdle)
		return os.NewSyscallError("epoll_ctl", err)
	}
	s.added = true
	s.state.Store(state)
	// A loop that broke meanwhile may not have seen s reading: whichever
	// of it and this takes s back from reading fails the request.
	if b := l.broken.Load(); b != nil && (state != sockReading || s.state.CompareAndSwap(sockReading, sockIdle)) {
		s.state.Store(sockIdle)
		return *b
	}
	return nil
}

// dialSock connects to key's server, or its proxy, and takes the socket
// over from package net, for the next loop (eventLoops must have started
// them), and the next ring loop to read it when ring is set (ringLoops
// must have started them).
func (t *Transport) dialSock(ctx context.Context, key string, ring bool) (*sock, error) {
	r := t.routeFor(key)
	if r.err != nil {
		return nil, r.err
	}
	_, addr := splitKey(key)
	conn, err := t.dialer.DialContext(ctx, "tcp", r.addr(addr))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rc, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) {
		// F_DUPFD_CLOEXEC: the copy shares the socket and its
		// non-blocking mode, and is not inherited by children.
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, f, syscall.F_DUPFD_CLOEXEC, 0)
		fd = int(r)
		if e != 0 {
			derr = os.NewSyscallError("fcntl", e)
		}
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	netstamp.EnableFD(fd) //nolint:errcheck // without it reads are timed when they return
	s := &sock{fd: fd, gen: loops.gen.Add(1), key: key, loop: nextLoop()}
	if ring {
		s.ring = nextRing()
	}
	if b := s.loop.broken.Load(); b != nil {
		syscall.Close(fd) //nolint:errcheck // never used
		return nil, *b
	}
	socks.set(fd, s)
	return s, nil
}

// write writes b, waiting in the loop while the socket has no room. It
// returns how many bytes went out.
func (s *sock) write(x *Exchange, b []byte) (int, error) {
	n := 0
	x.wakeChan()
	s.x = x // for the loop's wake-up, before any watch
	for n < len(b) {
		if n == 0 {
			x.first()
		}
		// The socket is non-blocking, so the write never waits: a raw
		// system call, which the runtime does not count as one. (A
		// counted one that the kernel's loopback delivery makes last
		// more than 20 µs has its processor taken away by the runtime's
		// monitor, which then wakes every 20 µs looking for more: 10%
		// of the client's CPU in the throughput run.)
		r, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(s.fd), uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
		if errno == 0 && r > 0 {
			n += int(r)
			continue
		}
		if errno == syscall.EINTR {
			continue
		}
		if errno != syscall.EAGAIN {
			var err error = errno
			if errno == 0 {
				err = syscall.EPIPE
			}
			return n, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", err)}
		}
		select { // a token from before: this wait needs a new one
		case <-x.wake:
		default:
		}
		if err := s.loop.watch(s, sockWriting); err != nil {
			return n, err
		}
		<-x.wake
		if b := s.loop.broken.Load(); b != nil {
			s.state.Store(sockIdle)
			return n, *b
		}
	}
	return n, nil
}

// shutdown ends whatever waits on s (its context ended): the loop then
// reads its end.
func (s *sock) shutdown() {
	s.mu.Lock()
	if !s.closed {
		syscall.Shutdown(s.fd, syscall.SHUT_RDWR) //nolint:errcheck // nothing more to do
	}
	s.mu.Unlock()
}

func (s *sock) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	socks.clear(s)
	syscall.Close(s.fd) //nolint:errcheck // nothing more to do
}

// alive reports whether an idle socket can still be used (see alive).
func (s *sock) alive() bool {
	if s.eof || s.dirty {
		return false
	}
	var b [1]byte
	_, _, err := syscall.Recvfrom(s.fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN
}
