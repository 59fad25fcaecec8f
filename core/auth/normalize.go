package auth

import "github.com/authport/authport/core/provider"

// NormalizeEmail is authport's one normalisation of e-mail addresses.
// core/auth applies it to every address that enters: the e-mail sign-in's
// address (through the e-mail provider's default NormalizeIdentifier, which
// is this function), an OAuth/OIDC profile's address, the address of a
// passkey sign-up, and the lookups of [Auth.UserByEmail]. It is the same
// function as [provider.NormalizeEmail].
//
// The rule:
//
//   - surrounding white space is trimmed;
//   - the address is put in Unicode NFC, so composed and decomposed
//     spellings ("josé" as one code point or as "e" and a combining accent)
//     are one address;
//   - the domain is mapped to its lowercase ASCII form with IDNA (UTS #46,
//     punycode), so "bücher.example" and "xn--bcher-kva.example" are one
//     domain;
//   - the local part is lowercased too. RFC 5321 allows a mail server to
//     treat the local part's case as significant, but none in common use
//     does, Auth.js's default normalizeIdentifier lowercases it, and one
//     user per spelling of an address would let "Victim@example.com" be a
//     second account beside "victim@example.com". Nothing else in the local
//     part is changed: dots and "+tags" stay, as they are the mail
//     provider's rule, not the address's.
//
// An address it refuses gives an error matching [provider.ErrInvalidEmail].
// A custom [provider.EmailConfig.NormalizeIdentifier] replaces the rule for
// that provider's links only; make it call NormalizeEmail first so that the
// same person is the same user whichever way they sign in.
func NormalizeEmail(s string) (string, error) { return provider.NormalizeEmail(s) }
