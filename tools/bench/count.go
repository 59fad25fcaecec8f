package main

import (
	"context"
	"net"
	"sync/atomic"
)

// roundTrips counts the round trips a client makes to its server: every
// connection the client dials through dial is wrapped, and a round trip is
// counted at the first write after the connection last read (a request, or
// a pipeline of requests sent together, and the reply it waits for).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) load() int64 {
	if r == nil {
		return 0
	}
	return r.n.Load()
}

// dial dials network/addr and wraps the connection.
func (r *roundTrips) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, rt: r}, nil
}

type countingConn struct {
	net.Conn
	rt *roundTrips
	// writing is set by a write and cleared by a read that got bytes.
	writing atomic.Bool
}

func (c *countingConn) Write(b []byte) (int, error) {
	if !c.writing.Swap(true) {
		c.rt.n.Add(1)
	}
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.writing.Store(false)
	}
	return n, err
}
