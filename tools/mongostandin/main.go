// Command mongostandin is a MongoDB stand-in for authport's tests on machines
// that have no MongoDB server: it embeds FerretDB v1 (a MongoDB wire-protocol
// server written in Go) with its SQLite backend and serves it on a loopback
// TCP address.
//
// Usage:
//
//	mongostandin [-listen 127.0.0.1:27018] [-data DIR] [-v]
//	mongostandin -ping [-listen 127.0.0.1:27018]
//
// The SQLite files go to -data, which is created if missing; without -data a
// fresh temporary directory is used and removed on exit. Clients connect with
// mongodb://ADDR/. The server stops cleanly on SIGINT or SIGTERM.
//
// With -ping it serves nothing: it sends a ping command to the MongoDB
// wire-protocol server at -listen (ours or any other) and exits 0 if that
// answers ok within a few seconds, 1 otherwise. Scripts use it to wait for
// the stand-in to be ready.
//
// FerretDB v1 is not MongoDB: it has no transactions, change streams,
// $lookup, TTL or partial indexes, and its updates are not atomic under
// concurrency. README.md lists what was checked.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/FerretDB/wire/wireclient"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27018", "TCP `address` to serve the MongoDB wire protocol on")
	data := flag.String("data", "", "`directory` for the SQLite files (default: a temporary directory removed on exit)")
	verbose := flag.Bool("v", false, "log every connection and command (FerretDB's info and debug logs)")
	ping := flag.Bool("ping", false, "only check that a MongoDB server answers at -listen, and exit")
	flag.Parse()

	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "mongostandin: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}

	if *ping {
		if err := pingServer(*listen, 3*time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "mongostandin: no MongoDB server answers at %s: %v\n", *listen, err)
			os.Exit(1)
		}
		return
	}

	if err := run(*listen, *data, *verbose); err != nil {
		fmt.Fprintf(os.Stderr, "mongostandin: %v\n", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM.
func run(listen, data string, verbose bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if data == "" {
		dir, err := os.MkdirTemp("", "mongostandin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		data = dir
	}

	level := slog.LevelError
	if verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := newServer(listen, data, logger)
	if err != nil {
		return err
	}

	// Ready line for humans and scripts; the listener is already bound here.
	fmt.Fprintf(os.Stderr, "mongostandin: serving %s (FerretDB, SQLite in %s)\n", f.MongoDBURI(), data)

	return f.Run(ctx)
}

// newServer creates the data directory and a FerretDB instance that has
// already bound listen (so a busy port fails here, not later).
func newServer(listen, data string, logger *slog.Logger) (*ferretdb.FerretDB, error) {
	dir, err := filepath.Abs(data)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listen},
		Logger:   logger,
		Handler:  "sqlite",
		// FerretDB wants a file: URI naming a directory, with a trailing slash.
		SQLiteURL: (&url.URL{Scheme: "file", Path: dir + "/"}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("starting FerretDB on %s: %w", listen, err)
	}
	return f, nil
}

// pingServer sends one ping command to the MongoDB server at addr.
func pingServer(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	conn, err := wireclient.Connect(ctx, "mongodb://"+addr+"/", slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer conn.Close()

	return conn.Ping(ctx)
}
