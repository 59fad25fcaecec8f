package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// locked runs f holding logDir/SERVICE.lock, so that concurrent runs never
// set up the same service at once, while a run busy building the stand-in
// does not hold up another that wants PostgreSQL. The file is opened
// close-on-exec: a daemon started meanwhile does not hold the lock.
func (s *services) locked(service string, f func() error) error {
	path := filepath.Join(s.logDir, service+".lock")
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	deadline := time.Now().Add(15 * time.Minute)
	for syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: another scripts/services.sh has held %s for 15 minutes; is it stuck?", service, path)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return f()
}
