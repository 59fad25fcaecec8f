//go:build authport_consumer

// The consumer check (tools/release/consumer.go) builds this file with the
// check of one module (adapter.go and the adapter's own file, or jwt.go,
// oauth.go, mail.go, passkey.go) into a program of a module outside the
// repository, which uses that module through the released modules only.
package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msg, err := check(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
	fmt.Println("ok:", msg)
}
