//go:build linux

package uring

import (
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"benchserve/wire/netstamp"

	"golang.org/x/sys/unix"
)

// The cost of a received chunk, two ways (issue 33), on many loopback TCP
// sockets that ask for kernel receive times, a writer sending one 100-byte
// chunk to each in turn (an SSE server's decode step) before the reader
// takes them all:
//
//	go test ./wire/uring -run XXX -bench Chunks -benchtime 200000x
//
// Epoll is today's event loop: epoll_wait, then one recvmsg per ready
// socket with its SCM_TIMESTAMPNS. Uring is a multishot recvmsg per
// socket into a provided-buffer ring, each completion with its own
// control data; the reader enters the kernel once to have the reads of
// every ready socket done (deferred task work) and takes their
// completions from the ring in memory. ns/chunk is the
// wall time (the writer's sends included); cpu-ns/chunk the reader
// thread's CPU (user and system, its share of the kernel's receive work
// included: the recvmsg, or the ring's deferred task work, which runs
// on the ring's thread when it asks); syscalls/chunk the reader's system calls
// other than the hand-over between the two threads, which both pay alike.
func BenchmarkChunks(b *testing.B) {
	for _, n := range []int{16, 256} {
		b.Run("epoll/conns="+itoa(n), func(b *testing.B) { benchChunks(b, n, newEpollReader) })
		b.Run("uring/conns="+itoa(n), func(b *testing.B) {
			if err := Available(); err != nil {
				b.Skip(err)
			}
			benchChunks(b, n, newUringReader)
		})
	}
}

const chunkSize = 100

// reader takes one round of chunks (want of them) from its sockets and
// counts them.
type reader interface {
	round(want int) (syscalls, unstamped int)
	close()
}

func benchChunks(b *testing.B, n int, newReader func(b *testing.B, fds []int) reader) {
	writers, fds := conns(b, n)
	chunk := make([]byte, chunkSize)
	for i := range chunk {
		chunk[i] = 'x'
	}
	chunk[chunkSize-2], chunk[chunkSize-1] = '\n', '\n'
	start, done := make(chan int), make(chan [2]int)
	var cpu time.Duration
	go func() {
		runtime.LockOSThread() // the ring's thread, for the uring reader
		defer runtime.UnlockOSThread()
		r := newReader(b, fds)
		defer r.close()
		var sys, unst int
		c0 := threadCPU()
		for want := range start {
			s, u := r.round(want)
			sys += s
			unst += u
		}
		cpu = threadCPU() - c0
		done <- [2]int{sys, unst}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += n {
		k := min(n, b.N-sent)
		for _, w := range writers[:k] {
			if _, err := w.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		start <- k
		// The reader is done with a round before the next is sent: its
		// sockets are all ready at once, as at a server's decode step.
		start <- 0
	}
	close(start)
	res := <-done
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/chunk")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/chunk")
	b.ReportMetric(float64(res[0])/float64(b.N), "syscalls/chunk")
	b.ReportMetric(float64(res[1])/float64(b.N), "unstamped/chunk")
}

// conns opens n loopback connections: the writers' ends and the
// readers' non-blocking socket fds (taken from package net, so that Go's
// poller never sees them), which ask for receive times.
func conns(b *testing.B, n int) ([]net.Conn, []int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var writers []net.Conn
	var fds []int
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		w, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		w.(*net.TCPConn).SetNoDelay(true)
		b.Cleanup(func() { w.Close() })
		writers = append(writers, w)
		f, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			b.Fatal(err)
		}
		fd, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { unix.Close(fd) })
		if err := unix.SetNonblock(fd, true); err != nil {
			b.Fatal(err)
		}
		if err := netstamp.EnableFD(fd); err != nil {
			b.Fatal(err)
		}
		fds = append(fds, fd)
	}
	return writers, fds
}

type epollReader struct {
	ep     int
	fds    []int
	events []syscall.EpollEvent
	buf    []byte
	oob    [64]byte
	msg    syscall.Msghdr
	iov    syscall.Iovec
}

func newEpollReader(b *testing.B, fds []int) reader {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	for _, fd := range fds {
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			b.Fatal(err)
		}
	}
	r := &epollReader{ep: ep, fds: fds, events: make([]syscall.EpollEvent, 256), buf: make([]byte, 64<<10)}
	r.msg.Iov, r.msg.Iovlen, r.msg.Control = &r.iov, 1, &r.oob[0]
	return r
}

// round is the event loop's reading: a blocking epoll_wait while nothing
// is ready (the loop parks in Go's poller instead: one wait either way),
// one recvmsg per ready socket.
func (r *epollReader) round(want int) (syscalls, unstamped int) {
	for got := 0; got < want*chunkSize; {
		n, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(r.ep), uintptr(unsafe.Pointer(&r.events[0])), uintptr(len(r.events)), ^uintptr(0), 0, 0)
		syscalls++
		if errno != 0 {
			continue
		}
		for _, ev := range r.events[:n] {
			r.iov.Base = &r.buf[0]
			r.iov.SetLen(len(r.buf))
			r.msg.SetControllen(len(r.oob))
			m, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(ev.Fd), uintptr(unsafe.Pointer(&r.msg)), syscall.MSG_DONTWAIT)
			syscalls++
			if errno != 0 {
				continue
			}
			got += int(m)
			if netstamp.ReceiveTime(r.oob[:r.msg.Controllen]) == 0 {
				unstamped++
			}
		}
	}
	return syscalls, unstamped
}

func (r *epollReader) close() { syscall.Close(r.ep) }

type uringReader struct {
	ring  *Ring
	bufs  *BufRing
	fds   []int
	msg   unix.Msghdr
	armed bool
}

// controlSpace holds one SCM_TIMESTAMPNS message.
var controlSpace = uint32(unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))

func newUringReader(b *testing.B, fds []int) reader {
	ring, err := New(1024, 4096)
	if err != nil {
		b.Fatal(err)
	}
	bufs, err := ring.NewBufRing(0, 1024, 2048)
	if err != nil {
		ring.Close()
		b.Fatal(err)
	}
	r := &uringReader{ring: ring, bufs: bufs, fds: fds}
	r.msg.SetControllen(int(controlSpace))
	return r
}

func (r *uringReader) arm(i int) {
	if err := r.ring.RecvmsgMultishot(r.fds[i], &r.msg, 0, uint64(i)); err == ErrFull {
		r.ring.Submit() //nolint:errcheck // the next arm says
		r.ring.RecvmsgMultishot(r.fds[i], &r.msg, 0, uint64(i))
	}
}

// round takes every completion waiting, entering the kernel (submitting
// any reads to arm again, running the reads of the ready sockets, waiting
// for one if none is) only when none is.
func (r *uringReader) round(want int) (syscalls, unstamped int) {
	if !r.armed {
		for i := range r.fds {
			r.arm(i)
		}
		r.armed = true
	}
	for got := 0; got < want*chunkSize; {
		cqes := r.ring.Completions()
		if len(cqes) == 0 {
			// Have the reads that wait made, up to a batch of them; wait
			// only when there were none.
			if err := r.ring.Collect(collectBatch); err != nil {
				panic(err)
			}
			syscalls++
			if len(r.ring.Completions()) == 0 && !r.ring.Work() {
				if err := r.ring.Wait(); err != nil {
					panic(err)
				}
				syscalls++
			}
			continue
		}
		for i := range cqes {
			c := &cqes[i]
			if id, ok := c.Buffer(); ok {
				out, ok := ParseRecvmsg(r.bufs.Buf(id), c.Res, 0, controlSpace)
				if ok {
					got += len(out.Payload)
					if netstamp.ReceiveTime(out.Control) == 0 {
						unstamped++
					}
				}
				r.bufs.Give(id)
			}
			if !c.More() {
				r.arm(int(c.UserData)) // out of buffers (ENOBUFS): read on
			}
		}
		r.bufs.Publish()
		r.ring.Done(len(cqes))
	}
	if r.ring.pending > 0 {
		r.ring.Submit() //nolint:errcheck // a benchmark: the next round stalls
		syscalls++
	}
	return syscalls, unstamped
}

// collectBatch is how many reads one Collect makes at most (the kernel's
// own batch, without it, is 20).
const collectBatch = 1024

func (r *uringReader) close() {
	r.ring.Close()
	r.bufs.Free()
}

// threadCPU is the calling thread's CPU time so far.
func threadCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
