package gormadapter

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"
	"sync/atomic"
)

// counter records the statements executed through a counting connection:
// every query and exec (prepared or not), and transaction boundaries apart.
// Preparing a statement is not counted: it runs nothing.
type counter struct {
	mu         sync.Mutex
	statements []string
	begins     int
	commits    int
	rollbacks  int

	// beforePrepare, when set (before the connector is used), runs
	// before every prepare on a connection: tests use it to make a
	// prepare slow.
	beforePrepare func(ctx context.Context, query string)
	// prepares counts the statements prepared on connections, and open
	// those not closed yet.
	prepares, open atomic.Int64
}

func (c *counter) stmt(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if query == "COMMIT" {
		// The end of a transaction on MySQL, sent as a statement so that
		// it honours the context (commitMySQL): a commit, not a statement
		// of the operation.
		c.commits++
		return
	}
	c.statements = append(c.statements, query)
}

func (c *counter) reset() {
	c.mu.Lock()
	c.statements, c.begins, c.commits, c.rollbacks = nil, 0, 0, 0
	c.mu.Unlock()
}

// snapshot returns the statements run since the last reset and the
// number of transactions begun.
func (c *counter) snapshot() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.statements...), c.begins
}

// countingConnector wraps a driver so that every statement run on its
// connections is counted. It forwards the optional interfaces the drivers
// of this module implement, so that database/sql behaves as without it.
type countingConnector struct {
	dsn string
	drv driver.Driver
	c   *counter
}

func (k *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var conn driver.Conn
	var err error
	if dc, ok := k.drv.(driver.DriverContext); ok {
		var cn driver.Connector
		if cn, err = dc.OpenConnector(k.dsn); err != nil {
			return nil, err
		}
		conn, err = cn.Connect(ctx)
	} else {
		conn, err = k.drv.Open(k.dsn)
	}
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: k.c}, nil
}

func (k *countingConnector) Driver() driver.Driver { return k.drv }

type countingConn struct {
	driver.Conn
	c *counter
}

func (cc *countingConn) Prepare(query string) (driver.Stmt, error) {
	return cc.PrepareContext(context.Background(), query)
}

func (cc *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if cc.c.beforePrepare != nil {
		cc.c.beforePrepare(ctx, query)
	}
	var s driver.Stmt
	var err error
	if p, ok := cc.Conn.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, query)
	} else {
		s, err = cc.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	cc.c.prepares.Add(1)
	cc.c.open.Add(1)
	return &countingStmt{Stmt: s, query: query, c: cc.c}, nil
}

func (cc *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var tx driver.Tx
	var err error
	if b, ok := cc.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = cc.Conn.Begin() //nolint:staticcheck // the fallback database/sql itself uses
	}
	if err != nil {
		return nil, err
	}
	cc.c.mu.Lock()
	cc.c.begins++
	cc.c.mu.Unlock()
	return &countingTx{Tx: tx, c: cc.c}, nil
}

// counted runs query with run on cc's connection as an I (ErrSkip when it
// is none, as database/sql expects) and counts it unless the driver skipped.
func counted[I, R any](cc *countingConn, query string, run func(I) (R, error)) (R, error) {
	c, ok := cc.Conn.(I)
	if !ok {
		var none R
		return none, driver.ErrSkip
	}
	r, err := run(c)
	if !errors.Is(err, driver.ErrSkip) {
		cc.c.stmt(query)
	}
	return r, err
}

func (cc *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return counted(cc, query, func(e driver.ExecerContext) (driver.Result, error) { return e.ExecContext(ctx, query, args) })
}

func (cc *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return counted(cc, query, func(q driver.QueryerContext) (driver.Rows, error) { return q.QueryContext(ctx, query, args) })
}

func (cc *countingConn) Ping(ctx context.Context) error {
	if p, ok := cc.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (cc *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := cc.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (cc *countingConn) IsValid() bool {
	if v, ok := cc.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (cc *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := cc.Conn.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type countingTx struct {
	driver.Tx
	c *counter
}

func (t *countingTx) Commit() error {
	t.c.mu.Lock()
	t.c.commits++
	t.c.mu.Unlock()
	return t.Tx.Commit()
}

func (t *countingTx) Rollback() error {
	t.c.mu.Lock()
	t.c.rollbacks++
	t.c.mu.Unlock()
	return t.Tx.Rollback()
}

type countingStmt struct {
	driver.Stmt
	query string
	c     *counter
}

func (s *countingStmt) Close() error {
	s.c.open.Add(-1)
	return s.Stmt.Close()
}

// stmtRun counts s and runs it with run where the driver's statement is
// an I, else with old, its call without a context (for old drivers).
func stmtRun[I, R any](s *countingStmt, args []driver.NamedValue, run func(I) (R, error), old func([]driver.Value) (R, error)) (R, error) {
	s.c.stmt(s.query)
	if st, ok := s.Stmt.(I); ok {
		return run(st)
	}
	vals, err := plainValues(args)
	if err != nil {
		var none R
		return none, err
	}
	return old(vals)
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return stmtRun(s, args, func(e driver.StmtExecContext) (driver.Result, error) { return e.ExecContext(ctx, args) },
		s.Stmt.Exec) //nolint:staticcheck // fallback for old drivers
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return stmtRun(s, args, func(q driver.StmtQueryContext) (driver.Rows, error) { return q.QueryContext(ctx, args) },
		s.Stmt.Query) //nolint:staticcheck // fallback for old drivers
}

func (s *countingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func plainValues(args []driver.NamedValue) ([]driver.Value, error) {
	vals := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("named parameters are not supported")
		}
		vals[i] = a.Value
	}
	return vals, nil
}
