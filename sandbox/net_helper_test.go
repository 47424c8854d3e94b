package sandbox

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
)

// listenLoopback starts a TCP and a UDP listener on 127.0.0.1 (and TCP on
// ::1 at the same port when possible) and counts whatever reaches them.
func listenLoopback(t *testing.T) (tcpPort, udpPort int, count func() int64) {
	t.Helper()
	var n atomic.Int64
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	tcpPort = ln.Addr().(*net.TCPAddr).Port
	accept := func(l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}
	go accept(ln)
	if ln6, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(tcpPort))); err == nil {
		t.Cleanup(func() { ln6.Close() })
		go accept(ln6)
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	udpPort = pc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	if pc6, err := net.ListenPacket("udp6", net.JoinHostPort("::1", strconv.Itoa(udpPort))); err == nil {
		t.Cleanup(func() { pc6.Close() })
		go func() {
			buf := make([]byte, 2048)
			for {
				if _, _, err := pc6.ReadFrom(buf); err != nil {
					return
				}
				n.Add(1)
			}
		}()
	}
	return tcpPort, udpPort, n.Load
}
