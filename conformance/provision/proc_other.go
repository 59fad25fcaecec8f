//go:build !unix

package provision

import "syscall"

// reaperProcAttr returns nil where process groups do not exist.
func reaperProcAttr() *syscall.SysProcAttr { return nil }
