//go:build !linux

package oauthtest

import "syscall"

// dexProcAttr returns nil: only Linux can tie dex's life to the test
// process's; elsewhere t.Cleanup alone stops it.
func dexProcAttr() *syscall.SysProcAttr { return nil }
