package main

import (
	"context"
	"database/sql/driver"
	"sync"
)

// capture is a driver.Connector that records every statement (and its
// arguments) run through it, so that a test can EXPLAIN exactly what the
// adapter sends.
type capture struct {
	driver.Connector
	mu    sync.Mutex
	stmts []captured
}

type captured struct {
	query string
	args  []driver.NamedValue
}

func (c *capture) record(q string, args []driver.NamedValue) {
	c.mu.Lock()
	c.stmts = append(c.stmts, captured{q, append([]driver.NamedValue(nil), args...)})
	c.mu.Unlock()
}

func (c *capture) taken() []captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]captured(nil), c.stmts...)
}

func (c *capture) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Conn: conn, c: c}, nil
}

// captureConn runs every statement as a prepared statement of the
// underlying connection, recording it at execution.
type captureConn struct {
	driver.Conn
	c *capture
}

func (cc *captureConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	st, err := cc.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &captureStmt{Stmt: st, q: q, c: cc.c}, nil
}

func (cc *captureConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return cc.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (cc *captureConn) CheckNamedValue(v *driver.NamedValue) error {
	if nvc, ok := cc.Conn.(driver.NamedValueChecker); ok {
		return nvc.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

type captureStmt struct {
	driver.Stmt
	q string
	c *capture
}

func (s *captureStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.c.record(s.q, args)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *captureStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.c.record(s.q, args)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
