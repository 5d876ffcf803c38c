package netstamp

import (
	"net"
	"syscall"
	"testing"
)

// The floor of a receive path, one system call at a time, on a loopback
// TCP socket that asks for kernel receive times (the costs issue 20's
// event-driven path is measured against):
//
//	go test ./wire/netstamp -run XXX -bench Floor
//
// RecvmsgData is one recvmsg that returns a chunk with its time;
// RecvmsgEmpty the one that finds the socket empty (Go's poller makes it
// after every chunk before it parks the goroutine); EpollWaitReady one
// epoll_wait that reports a ready socket.
func BenchmarkFloor(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	f, err := server.(*net.TCPConn).File() // a blocking duplicate: ours to use directly
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1); err != nil {
		b.Skip("no SO_TIMESTAMPNS:", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 64)
	buf, oob := make([]byte, 64), make([]byte, 128)
	fill := func(n int) {
		for i := 0; i < n; i++ {
			client.Write(chunk)
		}
	}
	b.Run("RecvmsgData", func(b *testing.B) {
		// Chunks queued in batches of 512 (32 KB, under the receive
		// buffer), each read by one recvmsg of 64 bytes.
		for done := 0; b.Loop(); done++ {
			if done%512 == 0 {
				b.StopTimer()
				fill(512)
				for got := 0; got < 512*64; { // wait for all of them to land
					n, _, _ := syscall.Recvfrom(fd, make([]byte, 512*64), syscall.MSG_PEEK)
					got = n
				}
				b.StartTimer()
			}
			if n, _, _, _, err := syscall.Recvmsg(fd, buf, oob, 0); err != nil || n == 0 {
				b.Fatal(n, err)
			}
		}
		// Leave the socket empty for the next benchmark.
		for {
			if _, _, _, _, err := syscall.Recvmsg(fd, buf, oob, 0); err == syscall.EAGAIN {
				break
			}
		}
	})
	b.Run("RecvmsgEmpty", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, _, err := syscall.Recvmsg(fd, buf, oob, 0); err != syscall.EAGAIN {
				b.Fatal(err)
			}
		}
	})
	b.Run("EpollWaitReady", func(b *testing.B) {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		defer syscall.Close(ep)
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			b.Fatal(err)
		}
		fill(1)
		events := make([]syscall.EpollEvent, 64)
		for b.Loop() {
			if n, err := syscall.EpollWait(ep, events, -1); err != nil || n != 1 {
				b.Fatal(n, err)
			}
		}
	})
}
