//go:build !linux

package main

import "syscall"

// devDexProcAttr: elsewhere dex is stopped when the application stops.
func devDexProcAttr() *syscall.SysProcAttr { return nil }
