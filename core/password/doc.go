// Package password hashes and checks passwords, applies NIST SP 800-63B's
// password rules, and makes one-time codes.
//
// # Hashing
//
// [Argon2id] is the [Hasher]: it hashes with Argon2id (RFC 9106) and writes
// the hash in the PHC string format
// ($argon2id$v=19$m=65536,t=3,p=4$salt$hash), so any Argon2 implementation
// can read it back. [RFC9106Params] are RFC 9106's second recommended
// option; [NewArgon2id] takes other parameters, and when they change,
// [Argon2id.Verify] still accepts every older argon2id hash and reports
// that it should be re-hashed. [WithVerifiers] adds [Verifier]s for hashes
// another system wrote, so that a migrated user signs in with their old
// password and gets an Argon2id hash on the way ([Upgrade] and [Keep]
// choose whether a Verifier's match is re-hashed).
//
// # Sharing with Better Auth
//
// [BetterAuthScrypt] writes and reads Better Auth's own password hashes
// (scrypt, N=16384, r=16, p=1, 64-byte key, "<hex salt>:<hex key>"). Make
// it the Hasher while a Better Auth app shares the account table, so that
// each side verifies the passwords the other sets; or give its
// [BetterAuthScrypt.Verifier] to WithVerifiers behind Argon2id when moving
// off Better Auth. That Verifier keeps the hashes it matches, since the app
// could not verify their replacement, unless wrapped in [Upgrade].
//
// Hash and Verify take the password exactly as given: a caller runs
// [Normalize] (or [Policy.Validate], which normalises) first and hashes its
// result, at sign-up and at every sign-in alike, so that "é" typed as one
// code point or as "e" plus a combining accent is the same password.
// Both refuse a password longer than [MaxBytes] bytes before hashing it,
// so that a flood of huge passwords costs nothing.
//
// Argon2id uses Memory KiB for every hash it computes, Better Auth's scrypt
// 32 MiB; [WithMaxConcurrent] bounds how many run at once (by default
// GOMAXPROCS), so a flood of sign-ins waits (honouring its context) rather
// than exhausting memory.
//
// # Enumeration safety
//
// A sign-in with an unknown user name must cost what a wrong password
// costs. [Argon2id.DummyHash] (or [DummyHash] for any [Hasher]) returns a
// hash of a random password, made once: verify the password given against
// it when there is no user, and answer as for a wrong password.
//
// # Policy
//
// [Policy] is SP 800-63B §3.1.1.2: a minimum and a maximum length, counted
// in Unicode code points after NFKC normalisation, no composition rules,
// and a hook for refusing breached or common passwords. Its errors match
// [ErrPolicy] and say what to do.
//
// # One-time codes
//
// [NewCode] makes a 6-digit code from crypto/rand, [ValidCode] checks the
// shape of one a user typed, and [CodesEqual] compares two in constant
// time. Keeping codes short-lived and capping attempts is the caller's.
//
// Nothing in this package logs; no error carries a password, a hash or a
// code.
package password
