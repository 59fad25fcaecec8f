// Package bboltadapter is the authport adapter for bbolt
// (go.etcd.io/bbolt), the embedded, single-file key/value store: the
// default for a single Go binary with no database server to run. Its import
// path is github.com/authport/authport/adapters/bbolt; its package name is
// bboltadapter, so that it does not clash with bbolt itself.
//
// [New] wraps a *bbolt.DB the application opened; [Open] opens a file,
// waiting at most a lock timeout for another process's lock. The [Adapter]
// implements all 19 methods of the adapter contract ([core.Adapter]),
// [core.ExpiredPurger] ([Adapter.Sweep] runs the purge periodically) and
// the other extensions: among them the session inventory
// ([Adapter.ListSessionsByUserID], one prefix scan of the user's index
// entries in a read transaction; [Adapter.DeleteSessionsByUserID], one
// write transaction) with session metadata kept in the session record,
// usernames ([Adapter.GetUserByUsername]) and password hashes on accounts
// ([Adapter.SwapPasswordHash], a compare-and-set in one write
// transaction) and second factors ([Adapter.CreateFactor],
// [Adapter.ListFactorsByUserID], [Adapter.DeleteFactor] and
// [Adapter.SwapFactor], a compare-and-set in one write transaction, so that
// a code is accepted once). A user's e-mail address is optional.
//
// Every operation runs inside one bbolt transaction and is all or nothing
// (concurrent writes may share a commit; see [WriteGroup]). Records live in
// buckets keyed by
// their natural ids, with secondary indexes (e-mail → user, username →
// user, (provider, providerAccountId) → account, user → accounts, sessions,
// authenticators and factors, expiry → sessions and tokens) written in the same
// transaction as the record. Composite keys are length-prefixed, so no input
// can make two keys collide. [Adapter.CheckConsistency] walks the file and
// reports any dangling index entry or orphan record.
//
// Records are encoded compactly, led by a version byte; the module's
// README.md documents the format, the bucket layout, backups and limits
// (one writer at a time; one process per file).
package bboltadapter
