// Command authport-secret prints a new secret for AUTH_SECRET: 32 random
// bytes, base64-encoded, as Auth.js's `npx auth secret` makes one.
//
//	go run github.com/authport/authport/core/cmd/authport-secret@latest
//	go run ./core/cmd/authport-secret        # in a clone
//
// With -env it prints the line AUTH_SECRET="…" for a .env file. To rotate,
// put the new secret first and keep the old one after a comma
// (AUTH_SECRET="new,old") until the sessions and links made with the old
// one have expired.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "authport-secret:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("authport-secret", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := fs.Bool("env", false, `print AUTH_SECRET="…" instead of the bare secret`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (only -env)", fs.Args())
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	s := base64.StdEncoding.EncodeToString(b)
	if *env {
		s = `AUTH_SECRET="` + s + `"`
	}
	_, err := fmt.Fprintln(stdout, s)
	return err
}
