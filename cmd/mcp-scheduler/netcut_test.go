package main

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// cutProxy forwards TCP connections from a port on 127.0.0.1 to target, and can cut the
// link the way a network partition does, not the way a stopped server does: while cut, bytes
// already sent are held (neither forwarded nor refused, no connection is closed) and new
// connections are accepted and held too; heal lets everything held flow on, late, as packets
// retransmitted after a partition do. A test points one node's database URL and git remote at
// proxies to partition that node alone.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	open   chan struct{} // closed while the link is up; replaced by cut
}

// startCutProxy listens on 127.0.0.1 and forwards to target until the test ends.
func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target, open: make(chan struct{})}
	close(p.open)
	go p.accept()
	t.Cleanup(func() {
		p.heal()
		_ = ln.Close()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

// cut partitions the link until heal.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // already cut
	}
}

// heal ends the partition: what was held flows on.
func (p *cutProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// up waits until the link is up.
func (p *cutProxy) up() {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	<-open
}

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// serve dials the target once the link is up and copies both ways through the gate.
func (p *cutProxy) serve(c net.Conn) {
	defer c.Close()
	p.up()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { p.copy(s, c); done <- struct{}{} }()
	go func() { p.copy(c, s); done <- struct{}{} }()
	<-done
}

// copy forwards src to dst, holding each chunk while the link is cut.
func (p *cutProxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.up()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close()
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// hostOf is the host:port of a URL.
func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

// withHost is raw with its host:port replaced by hostPort.
func withHost(t *testing.T, raw, hostPort string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.Host = hostPort
	return u.String()
}
