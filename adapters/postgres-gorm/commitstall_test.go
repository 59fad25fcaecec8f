package gormadapter

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// stallProxy forwards TCP between the adapter and the real server until
// the client sends a packet containing trigger; from then on it forwards
// nothing more in either direction (the server, as the client sees it,
// stalls), until it is closed. This is the in-process fake for the negative
// case a real server cannot be made to produce on demand.
type stallProxy struct {
	ln      net.Listener
	target  string
	trigger []byte
	mu      sync.Mutex
	conns   []net.Conn
	stalled chan struct{}
	once    sync.Once
}

func newStallProxy(t *testing.T, target string, trigger []byte) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, trigger: trigger, stalled: make(chan struct{})}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go p.pipe(s, c, true)
		go p.pipe(c, s, false)
	}
}

// pipe copies from src to dst; fromClient is the client-to-server way,
// where the trigger is looked for.
func (p *stallProxy) pipe(dst, src net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromClient && bytes.Contains(buf[:n], p.trigger) {
				p.once.Do(func() { close(p.stalled) })
			}
			select {
			case <-p.stalled:
				// Stalled: hold everything until closed.
				_, _ = io.Copy(io.Discard, src)
				return
			default:
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *stallProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// TestMySQLCommitHonoursDeadline: on the real MariaDB, through a proxy that
// stops forwarding once the client sends COMMIT, an updateUser (a
// transaction on MySQL/MariaDB, which have no UPDATE … RETURNING) with a
// 1 s deadline returns within the deadline and a small margin, with the
// context's error. database/sql's Tx.Commit takes no context and the
// driver does not watch one during it, so a plain Commit waits for the
// server for as long as it stalls.
func TestMySQLCommitHonoursDeadline(t *testing.T) {
	direct := openMySQL(t, false)
	ctx := context.Background()
	setup := migrated(t, direct)
	if _, err := setup.CreateUser(ctx, core.User{ID: "u1", Email: "u1@example.com"}); err != nil {
		t.Fatal(err)
	}
	if setup.d.updateReturning {
		t.Skip("updateUser is one statement on this server: no transaction")
	}

	cfg, err := mysqldriver.ParseDSN(provision.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newStallProxy(t, cfg.Addr, []byte("\x03COMMIT"))
	cfg.Addr = proxy.ln.Addr().String()
	cfg.DBName = direct.name
	cfg.ParseTime = true
	sqlDB, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	gdb, err := gorm.Open(mysql.New(mysql.Config{Conn: sqlDB}), gormConfig())
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), gdb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	// Runs before a.Close (cleanups run last first): Close waits for a
	// call still stuck in the stall.
	t.Cleanup(proxy.close)

	const deadline = time.Second
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		cctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		_, err := a.UpdateUser(cctx, core.UserUpdate{ID: "u1", Name: core.Set(new("stalled"))})
		done <- err
	}()
	select {
	case err := <-done:
		took := time.Since(start)
		select {
		case <-proxy.stalled:
		default:
			t.Fatalf("updateUser returned (%v) without sending COMMIT: the test did not stall the server", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("updateUser with the server stalled at COMMIT = %v, want context.DeadlineExceeded", err)
		}
		if took > deadline+500*time.Millisecond {
			t.Errorf("updateUser returned after %v, deadline %v", took, deadline)
		}
		t.Logf("returned after %v: %v", took, err)
	case <-time.After(deadline + 5*time.Second):
		t.Fatalf("updateUser still running %v after its %v deadline while the server stalls at COMMIT", time.Since(start)-deadline, deadline)
	}
}
