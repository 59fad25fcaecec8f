package auth

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// The authentication methods a session records ([Authentication.Methods],
// the "amr" claim). Those of RFC 8176 keep their registered meaning; fed
// and email are authport's (RFC 8176 registers neither).
const (
	// AMRPassword (RFC 8176 "pwd"): a password, or a credentials
	// provider's Authorize.
	AMRPassword = "pwd"
	// AMROneTimePassword (RFC 8176 "otp"): a TOTP code, a recovery code,
	// or an e-mail code answered as a second factor.
	AMROneTimePassword = "otp"
	// AMRHardwareKey (RFC 8176 "hwk"): a passkey's proof of possession.
	AMRHardwareKey = "hwk"
	// AMRUser (RFC 8176 "user"): the authenticator verified its user (a
	// passkey with user verification).
	AMRUser = "user"
	// AMRMultiFactor (RFC 8176 "mfa"): two or more factors were proven:
	// a first and a second factor, or a passkey with user verification.
	AMRMultiFactor = "mfa"
	// AMRFederated ("fed", not registered): an OAuth or OIDC provider
	// authenticated the user.
	AMRFederated = "fed"
	// AMREmail ("email", not registered): an e-mail sign-in link or code
	// proved the mailbox.
	AMREmail = "email"
)

// firstFactorMethods are the methods a first factor of the provider type
// proves.
func firstFactorMethods(t provider.Type) []string {
	switch t {
	case provider.TypePassword, provider.TypeCredentials:
		return []string{AMRPassword}
	case provider.TypeOAuth, provider.TypeOIDC:
		return []string{AMRFederated}
	case provider.TypeEmail:
		return []string{AMREmail}
	case provider.TypeWebAuthn:
		return []string{AMRHardwareKey}
	}
	return nil
}

// methodsOf returns the provider's first-factor methods.
func (a *Auth) methodsOf(providerID string) []string {
	if p, ok := a.providers[providerID]; ok {
		return firstFactorMethods(p.Common().Type)
	}
	return nil
}

// combine returns the methods of first and then second, without repeats
// and in a fixed order, with "mfa" when they prove two factors: a second
// factor answered after a first (proofs of two steps), or a method set
// that says so itself.
func combine(first, second []string) []string {
	out := make([]string, 0, len(first)+len(second)+1)
	for _, m := range slices.Concat(first, second) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if len(first) > 0 && len(second) > 0 && !slices.Contains(out, AMRMultiFactor) {
		out = append(out, AMRMultiFactor)
	}
	slices.Sort(out)
	return out
}

// levelOf is the assurance level of a method set.
func levelOf(methods []string) string {
	if slices.Contains(methods, AMRMultiFactor) {
		return LevelMultiFactor
	}
	if len(methods) == 0 {
		return ""
	}
	return LevelSingleFactor
}

// authenticationAt is the [Authentication] of methods proven at t.
func authenticationAt(t time.Time, methods []string) Authentication {
	return Authentication{Time: t.Truncate(time.Second), Methods: methods, Level: levelOf(methods)}
}

// Database session tokens carry the authentication of the sign-in that
// made them: "<64 hex digits>_<auth_time, seconds since the epoch>_<amr
// joined by '-'>", e.g. "9f…e1_1767225600_mfa-otp-pwd". The store is keyed
// by the whole token, so a changed suffix names no session: the suffix is
// as tamper-evident as the token is unguessable, and no adapter stores
// anything new. A token without the suffix (made by [Auth.CreateSession],
// by Auth.js, or before authport recorded it) has an unknown
// authentication. '_' and '-' keep the token cookie-safe and out of the
// handler's other-sessions separator ('.').
const (
	tokenAuthSep  = "_"
	tokenAMRSep   = "-"
	maxTokenAMR   = 8
	tokenHexChars = 2 * sessionTokenBytes
)

// sessionTokenWith returns a new session token carrying au.
func sessionTokenWith(random string, au Authentication) string {
	var b strings.Builder
	b.Grow(len(random) + 32)
	b.WriteString(random)
	b.WriteString(tokenAuthSep)
	b.WriteString(strconv.FormatInt(au.Time.Unix(), 10))
	b.WriteString(tokenAuthSep)
	b.WriteString(strings.Join(au.Methods, tokenAMRSep))
	return b.String()
}

// tokenAuthentication reads the authentication a session token carries;
// zero for a token without one.
func tokenAuthentication(token string) Authentication {
	if len(token) < tokenHexChars+3 || token[tokenHexChars:tokenHexChars+1] != tokenAuthSep {
		return Authentication{}
	}
	rest := token[tokenHexChars+1:]
	i := strings.Index(rest, tokenAuthSep)
	if i <= 0 || i > 19 {
		return Authentication{}
	}
	secs, err := strconv.ParseInt(rest[:i], 10, 64)
	if err != nil || secs <= 0 {
		return Authentication{}
	}
	var methods []string
	if amr := rest[i+1:]; amr != "" {
		methods = strings.Split(amr, tokenAMRSep)
		if len(methods) > maxTokenAMR {
			return Authentication{}
		}
		for _, m := range methods {
			if !validMethod(m) {
				return Authentication{}
			}
		}
	}
	return Authentication{Time: time.Unix(secs, 0).UTC(), Methods: methods, Level: levelOf(methods)}
}

// validMethod reports whether m can be an amr value in a session token: 1
// to 16 bytes of a-z and 0-9.
func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for i := 0; i < len(m); i++ {
		if c := m[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// createSession is [Auth.CreateSession] for a sign-in that proved au: the
// token carries it.
func (a *Auth) createSession(ctx context.Context, userID string, au Authentication) (*core.Session, error) {
	random, err := randomHex(sessionTokenBytes)
	if err != nil {
		return nil, err
	}
	return a.storeSession(ctx, userID, sessionTokenWith(random, au))
}

// The JWT claims of the authentication (RFC 9068 §2.2.1, OIDC Core §2).
const (
	claimAMR      = "amr"
	claimACR      = "acr"
	claimAuthTime = "auth_time"
)

// setAuthClaims puts au into claims.
func setAuthClaims(claims map[string]any, au Authentication) {
	if au.Time.IsZero() {
		return
	}
	claims[claimAuthTime] = au.Time.Unix()
	claims[claimAMR] = slices.Clone(au.Methods)
	if au.Level != "" {
		claims[claimACR] = au.Level
	}
}

// claimsAuthentication reads the authentication of a JWT's claims, as
// set at sign-in or decoded from JSON.
func claimsAuthentication(claims map[string]any) Authentication {
	var secs int64
	switch v := claims[claimAuthTime].(type) {
	case int64:
		secs = v
	case int:
		secs = int64(v)
	case float64:
		secs = int64(v)
	default:
		return Authentication{}
	}
	if secs <= 0 {
		return Authentication{}
	}
	var methods []string
	switch v := claims[claimAMR].(type) {
	case []string:
		methods = slices.Clone(v)
	case []any:
		for _, m := range v {
			if s, ok := m.(string); ok {
				methods = append(methods, s)
			}
		}
	}
	level, _ := claims[claimACR].(string)
	if level == "" {
		level = levelOf(methods)
	}
	return Authentication{Time: time.Unix(secs, 0).UTC(), Methods: methods, Level: level}
}

// Authentication returns how the session st was authenticated: with
// database sessions from its token, with JWT sessions from its claims.
func (e Edge) Authentication(st SessionState) Authentication {
	if st.Claims != nil {
		return claimsAuthentication(st.Claims)
	}
	return tokenAuthentication(st.Session.SessionToken)
}

// Satisfied reports whether au meets s at now: authenticated within
// MaxAge (an unknown time never is, when MaxAge is set), with one of
// Methods (when set), at Level or above (when set; [LevelMultiFactor] is
// above [LevelSingleFactor]).
func (s StepUp) Satisfied(au Authentication, now time.Time) bool {
	if s.MaxAge > 0 {
		if au.Time.IsZero() || now.Sub(au.Time) > s.MaxAge || au.Time.Sub(now) > time.Minute {
			return false
		}
	}
	if len(s.Methods) > 0 && !slices.ContainsFunc(s.Methods, func(m string) bool { return slices.Contains(au.Methods, m) }) {
		return false
	}
	switch s.Level {
	case "":
	case LevelSingleFactor:
		return au.Level == LevelSingleFactor || au.Level == LevelMultiFactor
	default:
		return au.Level == s.Level
	}
	return true
}
