//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's ABI (include/uapi/linux/io_uring.h), the parts used here.
const (
	offSQRing = 0
	offSQEs   = 0x10000000

	setupCQSize       = 1 << 3
	setupTaskrunFlag  = 1 << 9
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13

	featSingleMmap = 1 << 0
	featNoDrop     = 1 << 1

	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3

	// The SQ ring's flags: completions wait in the kernel (the queue was
	// full), or reads wait to be made; the next enter takes them.
	sqCQOverflow = 1 << 1
	sqTaskrun    = 1 << 2

	opPollAdd     = 6
	opRecvmsg     = 10
	opAsyncCancel = 14

	sqeBufferSelect = 1 << 5
	recvMultishot   = 1 << 1 // in the SQE's ioprio
	pollAddMulti    = 1 << 0 // in the SQE's len

	// CQE flags.
	FlagBuffer  = 1 << 0 // a provided buffer holds the data: its id is flags >> 16
	FlagMore    = 1 << 1 // the request goes on (multishot); without it this is its last
	bufferShift = 16

	registerPbufRing = 22
)

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

// sqe is a submission queue entry (64 bytes).
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufGroup    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad         uint64
}

// CQE is a completion queue entry.
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// Buffer is the provided buffer a completion's data is in, and whether
// it has one.
func (c *CQE) Buffer() (uint16, bool) { return uint16(c.Flags >> bufferShift), c.Flags&FlagBuffer != 0 }

// More reports whether the request goes on after this completion.
func (c *CQE) More() bool { return c.Flags&FlagMore != 0 }

// Ring is one io_uring, owned by the thread that set it up (the caller
// locks its goroutine to its thread): only that thread submits, and the
// kernel's work for its reads (the recvmsg each completion stands for)
// waits until that thread enters the kernel to collect completions, then
// runs for all of them at once, instead of interrupting a thread at each
// arrival (IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_DEFER_TASKRUN: kernel
// 6.1). Its completion queue is read in place.
type Ring struct {
	fd      int
	ringMem []byte
	sqeMem  []byte

	sqHead, sqTail *uint32
	sqFlags        *uint32
	sqMask         uint32
	sqEntries      uint32
	sqes           []sqe
	pending        uint32 // queued since the last Submit

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []CQE
}

// New sets up a ring of sq submission and cq completion entries
// (powers of two).
func New(sq, cq uint32) (*Ring, error) {
	p := params{flags: setupCQSize | setupSingleIssuer | setupDeferTaskrun | setupTaskrunFlag, cqEntries: cq}
	fd, _, errno := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(sq), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, os.NewSyscallError("io_uring_setup", errno)
	}
	r := &Ring{fd: int(fd)}
	if p.features&featSingleMmap == 0 || p.features&featNoDrop == 0 {
		r.Close()
		return nil, errors.New("io_uring: the kernel is too old (no single mmap or no-drop completions)")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(CQE{})))
	mem, err := unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.Close()
		return nil, os.NewSyscallError("mmap", err)
	}
	r.ringMem = mem
	sqeMem, err := unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.Close()
		return nil, os.NewSyscallError("mmap", err)
	}
	r.sqeMem = sqeMem
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail, r.sqFlags = at(p.sqOff.head), at(p.sqOff.tail), at(p.sqOff.flags)
	r.sqMask, r.sqEntries = *at(p.sqOff.ringMask), p.sqEntries
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&sqeMem[0])), p.sqEntries)
	// The array maps each slot to the SQE of the same index, once for all.
	array := unsafe.Slice(at(p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead, r.cqTail = at(p.cqOff.head), at(p.cqOff.tail)
	r.cqMask = *at(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries)
	return r, nil
}

// Fd is the ring's file descriptor: it polls readable while completions
// wait.
func (r *Ring) Fd() int { return r.fd }

// Close unmaps and closes the ring; its requests end with it.
func (r *Ring) Close() error {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem) //nolint:errcheck // nothing to do
		r.sqeMem = nil
	}
	if r.ringMem != nil {
		unix.Munmap(r.ringMem) //nolint:errcheck // nothing to do
		r.ringMem = nil
	}
	return syscall.Close(r.fd)
}

// next is the next free SQE, zeroed, or nil when the queue is full.
func (r *Ring) next() *sqe {
	tail := *r.sqTail
	if tail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		return nil
	}
	e := &r.sqes[tail&r.sqMask]
	*e = sqe{}
	return e
}

// push publishes the SQE next returned.
func (r *Ring) push() {
	atomic.StoreUint32(r.sqTail, *r.sqTail+1)
	r.pending++
}

// ErrFull is a full submission queue: Submit, then queue again.
var ErrFull = errors.New("io_uring: submission queue full")

// RecvmsgMultishot queues a multishot recvmsg on fd into the buffers of
// group: one completion, tagged userData, per read, until it ends (a
// completion without FlagMore). msg says how much name and control space
// each buffer starts with; it must stay put until Submit returns.
func (r *Ring) RecvmsgMultishot(fd int, msg *unix.Msghdr, group uint16, userData uint64) error {
	e := r.next()
	if e == nil {
		return ErrFull
	}
	e.opcode, e.fd, e.addr, e.len = opRecvmsg, int32(fd), uint64(uintptr(unsafe.Pointer(msg))), 1
	e.flags, e.ioprio, e.bufGroup, e.userData = sqeBufferSelect, recvMultishot, group, userData
	r.push()
	return nil
}

// PollMultishot queues a multishot poll of fd for reading: one
// completion, tagged userData, each time fd is woken readable, until one
// comes without FlagMore.
func (r *Ring) PollMultishot(fd int, userData uint64) error {
	e := r.next()
	if e == nil {
		return ErrFull
	}
	e.opcode, e.fd, e.len, e.opFlags, e.userData = opPollAdd, int32(fd), pollAddMulti, unix.POLLIN, userData
	r.push()
	return nil
}

// Cancel queues the cancellation of the request tagged target; its own
// completion is tagged userData.
func (r *Ring) Cancel(target, userData uint64) error {
	e := r.next()
	if e == nil {
		return ErrFull
	}
	e.opcode, e.fd, e.addr, e.userData = opAsyncCancel, -1, target, userData
	r.push()
	return nil
}

// Queued reports whether entries wait to be submitted.
func (r *Ring) Queued() bool { return r.pending > 0 }

// Submit hands the queued entries to the kernel: one io_uring_enter that
// never blocks (a raw system call, which the runtime does not count).
func (r *Ring) Submit() error {
	for r.pending > 0 {
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), 0, 0, 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return os.NewSyscallError("io_uring_enter", errno)
		}
		r.pending -= uint32(n)
		if n == 0 {
			return errors.New("io_uring_enter: nothing submitted")
		}
	}
	return nil
}

// Collect submits what is queued and runs the kernel's work for the reads
// that have data (up to max of them; the kernel's own batch is 20), so
// that their completions wait in the queue: one io_uring_enter that never
// blocks (a zero timeout).
func (r *Ring) Collect(max int) error {
	ts := unix.Timespec{}
	arg := struct {
		sigmask   uint64
		sigmaskSz uint32
		minWait   uint32
		ts        uint64
	}{ts: uint64(uintptr(unsafe.Pointer(&ts)))}
	for {
		flags, argp, argsz := uintptr(enterGetEvents|enterExtArg), uintptr(unsafe.Pointer(&arg)), unsafe.Sizeof(arg)
		if max == 0 {
			flags, argp, argsz = enterGetEvents, 0, 0
		}
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(max), flags, argp, argsz)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 && errno != syscall.ETIME {
			return os.NewSyscallError("io_uring_enter", errno)
		}
		if errno == 0 {
			r.pending -= uint32(n)
		}
		return nil
	}
}

// Work reports whether the kernel holds work that only the next Collect
// does: reads beyond its last batch, or completions that found the queue
// full.
func (r *Ring) Work() bool { return atomic.LoadUint32(r.sqFlags)&(sqTaskrun|sqCQOverflow) != 0 }

// Wait submits what is queued and blocks until at least one completion
// waits (a blocking system call).
func (r *Ring) Wait() error {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), 1, enterGetEvents, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return os.NewSyscallError("io_uring_enter", errno)
		}
		r.pending -= uint32(n)
		return nil
	}
}

// Completions returns the completions waiting, in place: the first run
// up to the ring's end, the rest (after it wraps) in a second call. Done
// frees them.
func (r *Ring) Completions() []CQE {
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail)
	if head == tail {
		return nil
	}
	i := head & r.cqMask
	n := min(tail-head, uint32(len(r.cqes))-i)
	return r.cqes[i : i+n]
}

// Done frees the first n completions Completions returned.
func (r *Ring) Done(n int) { atomic.StoreUint32(r.cqHead, *r.cqHead+uint32(n)) }

// BufRing is a ring of provided buffers, all of one size, that multishot
// reads take from in turn; the reader gives each back once done with it.
type BufRing struct {
	ring  []byte // n io_uring_buf entries, shared with the kernel
	bufs  []byte
	size  int
	mask  uint16
	tail  uint16
	group uint16
}

// NewBufRing registers a ring of n buffers (a power of two, ≤ 32768) of
// size bytes each as group.
func (r *Ring) NewBufRing(group uint16, n, size int) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("io_uring: %d buffers: not a power of two up to 32768", n)
	}
	ring, err := unix.Mmap(-1, 0, n*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	bufs, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		unix.Munmap(ring) //nolint:errcheck // nothing to do
		return nil, os.NewSyscallError("mmap", err)
	}
	reg := struct {
		ringAddr    uint64
		ringEntries uint32
		bgid        uint16
		flags       uint16
		resv        [3]uint64
	}{ringAddr: uint64(uintptr(unsafe.Pointer(&ring[0]))), ringEntries: uint32(n), bgid: group}
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if errno != 0 {
		unix.Munmap(ring) //nolint:errcheck // nothing to do
		unix.Munmap(bufs) //nolint:errcheck // nothing to do
		return nil, os.NewSyscallError("io_uring_register", errno)
	}
	b := &BufRing{ring: ring, bufs: bufs, size: size, mask: uint16(n - 1), group: group}
	for i := range n {
		b.Give(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Buf is buffer id's memory.
func (b *BufRing) Buf(id uint16) []byte {
	o := int(id) * b.size
	return b.bufs[o : o+b.size : o+b.size]
}

// Give queues buffer id back for the kernel; Publish hands over those
// given.
func (b *BufRing) Give(id uint16) {
	e := (*struct {
		addr uint64
		len  uint32
		bid  uint16
		resv uint16
	})(unsafe.Pointer(&b.ring[int(b.tail&b.mask)*16]))
	e.addr, e.len, e.bid = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size]))), uint32(b.size), id
	b.tail++
}

// Publish moves the ring's tail past the buffers given. The tail is the
// 16 bits after the first entry's buffer id; the two are stored together
// as one atomic 32-bit word (Go has no 16-bit atomics), the id as it is
// (only this side writes the entries).
func (b *BufRing) Publish() {
	p := (*uint32)(unsafe.Pointer(&b.ring[12]))
	v := atomic.LoadUint32(p)
	(*[2]uint16)(unsafe.Pointer(&v))[1] = b.tail
	atomic.StoreUint32(p, v)
}

// RecvmsgOut is a multishot recvmsg's completion, laid out in its
// buffer: the header (io_uring_recvmsg_out), then the name and control
// space msg asked for, then the payload.
type RecvmsgOut struct {
	Control []byte // the control messages received
	Payload []byte // the bytes read; empty at the end of the stream
	Flags   uint32 // the recvmsg flags (MSG_CTRUNC, ...)
}

// ParseRecvmsg reads the completion of res bytes in buf, for a request
// whose msghdr asked for namelen and controllen bytes.
func ParseRecvmsg(buf []byte, res int32, namelen, controllen uint32) (RecvmsgOut, bool) {
	const hdr = 16
	start := hdr + int(namelen) + int(controllen)
	if res < int32(start) || int(res) > len(buf) {
		return RecvmsgOut{}, false
	}
	h := (*[4]uint32)(unsafe.Pointer(&buf[0])) // namelen, controllen, payloadlen, flags
	cl := min(int(h[1]), int(controllen))
	pl := int(res) - start
	return RecvmsgOut{Control: buf[hdr+int(namelen) : hdr+int(namelen)+cl], Payload: buf[start : start+pl], Flags: h[3]}, true
}

var avail struct {
	once sync.Once
	err  error
}

// Available reports why this process cannot use io_uring for multishot
// receives, or nil: a kernel before 6.1 (multishot recvmsg came in 6.0,
// deferred task work in 6.1), io_uring disabled (the io_uring_disabled sysctl, a seccomp
// filter: EPERM or ENOSYS), or a ring without provided-buffer rings.
func Available() error {
	avail.once.Do(func() { avail.err = probe() })
	return avail.err
}

func probe() error {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return os.NewSyscallError("uname", err)
	}
	rel := unix.ByteSliceToString(u.Release[:])
	if !kernelAtLeast(rel, 6, 1) {
		return fmt.Errorf("io_uring: kernel %s is older than 6.1 (multishot recvmsg, deferred task work)", rel)
	}
	r, err := New(4, 8)
	if err != nil {
		return err
	}
	b, err := r.NewBufRing(0, 1, 64)
	r.Close()
	if err != nil {
		return err
	}
	b.Free()
	return nil
}

// Free unmaps b's memory, once the ring it is registered with is closed.
func (b *BufRing) Free() {
	unix.Munmap(b.ring) //nolint:errcheck // nothing to do
	unix.Munmap(b.bufs) //nolint:errcheck // nothing to do
}

// kernelAtLeast reports whether the release string rel ("6.18.44-...")
// is at least major.minor.
func kernelAtLeast(rel string, major, minor int) bool {
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	mi := 0
	for _, c := range parts[1] {
		if c < '0' || c > '9' {
			break
		}
		mi = mi*10 + int(c-'0')
	}
	return ma > major || ma == major && mi >= minor
}
