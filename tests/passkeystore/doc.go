// Package passkeystore runs the passkey ceremony scenarios
// (passkey/passkeytest.Run) against real servers through the Redis and
// PostgreSQL (GORM) adapters, to show that authenticators round-trip
// through real storage and that the counter race has one winner there; and
// the page script in Chromium with a virtual authenticator.
// It is a module of its own, not released, so that the passkey module does
// not depend on any database driver.
package passkeystore
