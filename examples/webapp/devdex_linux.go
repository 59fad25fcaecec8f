package main

import "syscall"

// devDexProcAttr has the kernel stop dex when the application dies without
// stopping it (a kill), so that no dex outlives it.
func devDexProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
