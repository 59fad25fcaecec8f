//go:build unix

package provision

import "syscall"

// reaperProcAttr puts the container reaper in a process group of its own,
// so that an interrupt aimed at the test run does not stop it before it has
// removed the container.
func reaperProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
