// Package emailnorm is the one normalisation of e-mail addresses in
// authport. core/auth exports it as auth.NormalizeEmail and core/provider as
// provider.NormalizeEmail (the e-mail provider's default); both are this
// function, so that every way an address enters (e-mail link, OAuth/OIDC
// profile, passkey, credentials) gives the same identity.
package emailnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// Error is an address Normalize refuses; Why says what is wrong.
type Error struct{ Why string }

// Error says what is wrong with the address.
func (e *Error) Error() string { return "e-mail address " + e.Why }

// Length limits (RFC 5321 4.5.3.1: 64 octets before the @, 254 for a path).
// maxInput bounds what is looked at at all: normalising can shorten an
// address (composing accents, mapping full-width letters, dropping
// characters IDNA ignores), but no real address is four times too long in
// any spelling, and IDNA's punycode takes time quadratic in a label's
// length, so a longer input is refused before any work.
const (
	maxLocal = 64
	maxTotal = 254
	maxInput = 4 * maxTotal
)

// Normalize returns the canonical form of an e-mail address:
//
//   - surrounding white space is trimmed;
//   - the whole address is put in Unicode NFC, so composed and decomposed
//     spellings (josé, jose + U+0301) are one address;
//   - the local part is lowercased (Unicode simple case mapping), as
//     Auth.js's default normalizeIdentifier does, although RFC 5321 lets a
//     server treat the local part's case as significant: in practice no
//     mail system does, and one user per spelling would be a worse risk;
//   - the domain is mapped and converted to its ASCII form with IDNA
//     (UTS #46, the Lookup profile: lowercased, punycode for non-ASCII
//     labels), so bücher.example and xn--bcher-kva.example are one domain.
//
// It refuses an address without exactly one '@' with text on both sides,
// with white space, control characters, a comma or invalid UTF-8, whose
// domain is not dot-separated labels valid under IDNA, or that is longer
// than 254 bytes (64 before the '@') once normalised. The result is stable:
// Normalize(Normalize(s)) == Normalize(s).
func Normalize(s string) (string, error) {
	bad := func(why string) (string, error) { return "", &Error{Why: why} }
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("is empty")
	}
	if len(s) > maxInput {
		return bad("is too long")
	}
	if !utf8.ValidString(s) {
		return bad("is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' || r == utf8.RuneError {
			return bad("contains white space, a control character or a comma")
		}
	}
	if strings.Count(s, "@") != 1 {
		return bad("must contain exactly one @")
	}
	local, domain, _ := strings.Cut(s, "@")
	if local == "" || domain == "" {
		return bad("needs text before and after @")
	}
	// NFC, lowercase, NFC again: lowercasing can leave a string that NFC
	// composes differently, and the result must be stable.
	local = norm.NFC.String(strings.ToLower(norm.NFC.String(local)))
	for _, r := range local {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' || r == '@' {
			return bad("contains white space, a control character or a comma")
		}
	}
	if strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return bad("domain has an empty label")
	}
	if strings.ContainsAny(domain, "()<>[]:;\"\\") {
		return bad("domain has a character not allowed there")
	}
	ascii, err := idna.Lookup.ToASCII(norm.NFC.String(domain))
	if err != nil {
		return bad("domain is not a valid (internationalised) domain name")
	}
	ascii = strings.ToLower(ascii)
	for _, label := range strings.Split(ascii, ".") {
		if label == "" {
			return bad("domain has an empty label")
		}
	}
	out := local + "@" + ascii
	if len(out) > maxTotal || len(local) > maxLocal {
		return bad("is too long")
	}
	return out, nil
}
