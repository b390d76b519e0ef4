package cluster

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DelayProxy is a TCP proxy that holds every chunk of data going either way
// for Delay before forwarding it: a slow database, from the application's
// point of view.
type DelayProxy struct {
	Addr  string
	delay atomic.Int64
	l     net.Listener
	wg    sync.WaitGroup
}

// NewDelayProxy listens on loopback and forwards to target; t.Cleanup closes it.
func NewDelayProxy(t testing.TB, target string) *DelayProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &DelayProxy{Addr: l.Addr().String(), l: l}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			p.wg.Add(2)
			go p.pipe(up, c)
			go p.pipe(c, up)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// SetDelay changes the delay of every later chunk.
func (p *DelayProxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

func (p *DelayProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}
