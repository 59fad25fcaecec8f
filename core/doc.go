// Package core is the data-layer contract of authport: the records an
// authentication library keeps (users, accounts, sessions, verification
// tokens, authenticators) and the adapter methods through which it reads and
// writes them, as specified by the Auth.js adapter interface.
//
// Every adapter method is optional. An adapter is any value; each method it
// implements is one small, context-first interface ([UserCreator],
// [SessionAndUserGetter], [VerificationTokenUser], …), in the manner of
// database/sql/driver's optional interfaces. [Probe] reports which methods an
// adapter has, by their spec names, and [Require] hands one out or returns an
// error matching [ErrMissingAdapterMethod] that names what is missing and what
// needed it, so a missing method is an error a person can act on, never a
// panic.
//
// Not found is not an error: a lookup that finds nothing returns nil, nil.
// Nullable fields are pointers, so null and "" differ. Times are kept in UTC
// to the millisecond ([NormalizeTime]).
//
// The contract is written out in SPEC.md at the repository root; comments
// throughout authport cite its sections as "SPEC §N".
//
// This module depends only on the standard library and, for the one
// normalisation of e-mail addresses (auth.NormalizeEmail) and for password
// hashing (core/password), on the Go project's golang.org/x/net/idna,
// golang.org/x/text/unicode/norm and golang.org/x/crypto/argon2; the
// package core itself imports the standard library alone. Adapters live
// in their own modules (adapters/memory, adapters/bbolt, adapters/redis,
// adapters/postgres-gorm, adapters/mongodb), and the conformance module holds
// the suite that checks any adapter against this contract.
package core
