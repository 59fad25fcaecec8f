// Package handlersec runs the handler's security checks against real
// stores: an unknown session token costs one read and no write on bbolt,
// PostgreSQL (GORM) and Redis (so junk cookies cannot turn reads into
// writes), and the rate limits on sign-in e-mails hold across several
// handler instances sharing one Redis or Redis Cluster (so a fleet cannot
// be used to send a flood of e-mails). Its package stores opens those stores for
// its tests and for tests/passkeystore's. It is a module of its own, not
// released, so that the handler does not depend on any database driver.
package handlersec
