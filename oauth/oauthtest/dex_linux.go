package oauthtest

import "syscall"

// dexProcAttr has the kernel kill dex when the test process dies without
// running its cleanups (a test binary's -timeout panic, a kill), so that no
// dex outlives its test.
func dexProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
