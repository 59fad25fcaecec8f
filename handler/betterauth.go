package handler

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	jose "github.com/go-jose/go-jose/v4"
)

// BetterAuthCookies makes a Reader, or a Handler, keep sessions in Better
// Auth's cookies instead of Auth.js's, so that a Go service shares the
// sessions of a Better Auth app (better-auth 1.7) with the same secret:
//
//   - the session cookie is Better Auth's signed session token,
//     "better-auth.session_token" ("__Secure-" in front with
//     ReaderConfig.Secure, as Better Auth names it on an https base URL):
//     the token, a dot and the HMAC-SHA256 of the token under the secret
//     in padded base64, URL-encoded. A cookie whose signature does not
//     verify reads as signed out, before any store is asked.
//   - with CookieCache, the session is first read from Better Auth's
//     cookie cache, "better-auth.session_data" (whole or in chunks
//     .0, .1, …), without a store: verified, unexpired, of the configured
//     version and of the same token as the session cookie, as Better
//     Auth's own getSession takes it. Otherwise the token is looked up
//     through the Auth's adapter (getSessionAndUser), which must then hold
//     the sessions Better Auth writes.
//
// Sessions are database sessions: Better Auth has no other kind (its
// cookie cache is a cache of one). A Handler with BetterAuthCookies
// writes the session cookie signed as Better Auth does, so that a Better
// Auth app reading the same sessions table accepts it; it writes no
// cookie cache (Better Auth then reads its table). See
// docs/betterauth.md.
type BetterAuthCookies struct {
	// Secrets are the Better Auth app's secrets, newest first: its
	// BETTER_AUTH_SECRET (the secret option), or the values of its
	// secrets option in the same order. Empty means ReaderConfig.Secrets,
	// or the Auth's (Better Auth reads AUTH_SECRET too when
	// BETTER_AUTH_SECRET is unset). As in Better Auth, the newest alone
	// signs and verifies the session cookie and the compact and jwt
	// caches; the jwe cache opens with any of them.
	Secrets []string
	// CookiePrefix is the app's advanced.cookiePrefix; empty means
	// "better-auth".
	CookiePrefix string
	// CookieCache is the strategy of the app's session.cookieCache:
	// CookieCacheCompact, CookieCacheJWT or CookieCacheJWE. Empty (the
	// default) ignores the session_data cookie and looks every session
	// up, which needs ReaderConfig.Auth.
	CookieCache CookieCacheStrategy
	// CookieCacheVersion is the app's session.cookieCache.version, when it
	// is a string: a cache of another version reads as a miss. Empty
	// means Better Auth's default, "1".
	CookieCacheVersion string
}

// CookieCacheStrategy is how Better Auth's session_data cookie is made
// (its session.cookieCache.strategy option).
type CookieCacheStrategy string

// The strategies of Better Auth's cookie cache.
const (
	// CookieCacheCompact is base64url JSON signed with HMAC-SHA256 (Better
	// Auth's default).
	CookieCacheCompact CookieCacheStrategy = "compact"
	// CookieCacheJWT is a JWT signed with HS256 under the secret.
	CookieCacheJWT CookieCacheStrategy = "jwt"
	// CookieCacheJWE is a JWE (dir, A256CBC-HS512) with a key derived
	// from the secret by HKDF-SHA256.
	CookieCacheJWE CookieCacheStrategy = "jwe"
)

// betterAuth is a checked BetterAuthCookies.
type betterAuth struct {
	secrets [][]byte // newest first
	cache   CookieCacheStrategy
	version string
	token   string   // the session token cookie's name
	data    string   // the cookie cache's name
	jweKeys [][]byte // the jwe cache's keys, one a secret
	jweKIDs []string // their RFC 7638 thumbprints
}

// betterAuthDefaultPrefix is Better Auth's default cookie prefix.
const betterAuthDefaultPrefix = "better-auth"

// useBetterAuth sets the Reader up for cfg.BetterAuth (NewReader's hook):
// its cookie names, secrets and, unless set, the database strategy.
func (rd *Reader) useBetterAuth(cfg ReaderConfig) error {
	c := cfg.BetterAuth
	switch rd.strategy {
	case "":
		rd.strategy = auth.StrategyDatabase
	case auth.StrategyDatabase:
	default:
		return fmt.Errorf("%w: BetterAuth: Better Auth's sessions are database sessions; leave Strategy empty or set it to %q", core.ErrInvalidConfig, auth.StrategyDatabase)
	}
	switch c.CookieCache {
	case "", CookieCacheCompact, CookieCacheJWT, CookieCacheJWE:
	default:
		return fmt.Errorf("%w: BetterAuth.CookieCache %q is none of %q, %q and %q (the app's session.cookieCache.strategy)", core.ErrInvalidConfig, c.CookieCache, CookieCacheCompact, CookieCacheJWT, CookieCacheJWE)
	}
	if c.CookieCache == "" && cfg.Auth == nil {
		return fmt.Errorf("%w: BetterAuth: without CookieCache every session is looked up, which needs ReaderConfig.Auth (an adapter holding Better Auth's sessions)", core.ErrInvalidConfig)
	}
	if cfg.Bearer && cfg.Auth == nil {
		return fmt.Errorf("%w: BetterAuth: Bearer tokens are session tokens to look up, which needs ReaderConfig.Auth", core.ErrInvalidConfig)
	}
	secrets := c.Secrets
	if len(secrets) == 0 {
		secrets = cfg.Secrets
	}
	if len(secrets) == 0 && cfg.Auth != nil {
		secrets = cfg.Auth.Settings().Secrets
	}
	if err := auth.CheckSecrets(secrets, cfg.AllowShortSecrets); err != nil {
		return fmt.Errorf("%w: BetterAuth.Secrets: %w (give the BETTER_AUTH_SECRET of the app, newest first)", core.ErrInvalidConfig, err)
	}
	prefix := c.CookiePrefix
	if prefix == "" {
		prefix = betterAuthDefaultPrefix
	}
	if strings.ContainsAny(prefix, " \t\r\n;,=\"\\") || !plainCookieValue(prefix) {
		return fmt.Errorf("%w: BetterAuth.CookiePrefix %q cannot be part of a cookie name", core.ErrInvalidConfig, prefix)
	}
	secure := ""
	if cfg.Secure {
		secure = "__Secure-"
	}
	ba := &betterAuth{
		cache:   c.CookieCache,
		version: c.CookieCacheVersion,
		token:   secure + prefix + ".session_token",
		data:    secure + prefix + ".session_data",
	}
	if ba.version == "" {
		ba.version = "1"
	}
	for _, s := range secrets {
		ba.secrets = append(ba.secrets, []byte(s))
		if c.CookieCache == CookieCacheJWE {
			key, err := hkdf.Key(sha256.New, []byte(s), []byte(betterAuthJWESalt), betterAuthJWEInfo, 64)
			if err != nil {
				return fmt.Errorf("handler: deriving the Better Auth cookie cache key: %w", err)
			}
			sum := sha256.Sum256([]byte(`{"k":"` + base64.RawURLEncoding.EncodeToString(key) + `","kty":"oct"}`))
			ba.jweKeys = append(ba.jweKeys, key)
			ba.jweKIDs = append(ba.jweKIDs, base64.RawURLEncoding.EncodeToString(sum[:]))
		}
	}
	rd.ba = ba
	rd.names.SessionToken = ba.token
	return nil
}

// The HKDF salt and info Better Auth derives the jwe cookie cache's key
// with (64 bytes, for A256CBC-HS512).
const (
	betterAuthJWESalt = "better-auth-session"
	betterAuthJWEInfo = "BetterAuth.js Generated Encryption Key"
)

// sign returns the session cookie's value for token, as Better Auth's
// setSignedCookie writes it: encodeURIComponent(token + "." +
// base64(HMAC-SHA256(secret, token))).
func (ba *betterAuth) sign(token string) string {
	return encodeURIComponent(token + "." + base64.StdEncoding.EncodeToString(ba.mac(token)))
}

func (ba *betterAuth) mac(value string) []byte {
	m := hmac.New(sha256.New, ba.secrets[0])
	m.Write([]byte(value))
	return m.Sum(nil)
}

// sessionToken returns the verified token of the request's session
// cookie, "" when it has none or its signature does not verify (as Better
// Auth's getSignedCookie: the last dot splits the value from a 44-character
// padded base64 signature).
func (ba *betterAuth) sessionToken(r *http.Request) (token string, hadCookie bool) {
	v, ok := cookieValue(r, ba.token)
	if !ok {
		return "", false
	}
	return ba.verify(v), true
}

// verify returns the token a signed cookie value holds, or "".
func (ba *betterAuth) verify(v string) string {
	v = decodeURIComponent(strings.TrimSpace(v))
	i := strings.LastIndexByte(v, '.')
	if i < 1 {
		return ""
	}
	value, sig := v[:i], v[i+1:]
	if len(sig) != 44 || sig[43] != '=' {
		return ""
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, ba.mac(value)) {
		return ""
	}
	return value
}

// encodeURIComponent escapes s as JavaScript's encodeURIComponent does:
// every byte but the letters, digits and -_.!~*'() as %XX.
func encodeURIComponent(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// decodeURIComponent undoes encodeURIComponent as better-call's cookie
// parser does: only a value holding "%" is decoded, and one that does not
// decode is kept as it is.
func decodeURIComponent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	d, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return d
}

// betterAuthSession is Reader.session with Better Auth's cookies: the
// verified token, then the cookie cache when configured and valid for
// that token, then the store.
func (rd *Reader) betterAuthSession(ctx context.Context, r *http.Request) (*Session, bool, error) {
	token, hadCookie := rd.ba.sessionToken(r)
	if token == "" {
		if hadCookie {
			rd.log.DebugContext(ctx, "authport: Better Auth session cookie ignored", "reason", "invalid signature")
		}
		return nil, hadCookie, nil
	}
	if rd.ba.cache != "" {
		if v, ok := rd.ba.cacheValue(r); ok {
			s, err := rd.ba.readCache(v, token, rd.now())
			if err == nil {
				return s, true, nil
			}
			rd.log.DebugContext(ctx, "authport: Better Auth cookie cache ignored", "reason", err.Error())
		}
	}
	if rd.auth == nil {
		return nil, true, nil
	}
	s, err := rd.databaseSession(ctx, token)
	return s, true, err
}

// cacheValue returns the cookie cache's value: the cookie itself, or its
// chunks (name.0, name.1, …, decimal without leading zeros) joined in
// order, as Better Auth's getChunkedCookie reads them.
func (ba *betterAuth) cacheValue(r *http.Request) (string, bool) {
	if v, ok := cookieValue(r, ba.data); ok {
		return decodeURIComponent(v), true
	}
	type chunk struct {
		i int
		v string
	}
	var chunks []chunk
	seen := map[string]bool{}
	for _, c := range r.Cookies() {
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		rest, ok := strings.CutPrefix(c.Name, ba.data+".")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i < 0 || strconv.Itoa(i) != rest || len(chunks) >= maxBetterAuthChunks {
			continue
		}
		chunks = append(chunks, chunk{i, decodeURIComponent(c.Value)})
	}
	if len(chunks) == 0 {
		return "", false
	}
	slices.SortStableFunc(chunks, func(a, b chunk) int { return a.i - b.i })
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.v)
	}
	return b.String(), true
}

// maxBetterAuthChunks is the most chunks Better Auth splits a cookie into.
const maxBetterAuthChunks = 100

// errCache is why a cookie cache was not taken (a debug log's reason).
var errCache = errors.New("handler: Better Auth cookie cache")

func cacheErr(why string) error { return fmt.Errorf("%w: %s", errCache, why) }

// readCache opens the cookie cache v with the configured strategy and
// returns its session when it belongs to token, has the configured
// version and has not expired at now (both the cache and the session it
// holds, to the millisecond, as Better Auth's getSession compares them).
func (ba *betterAuth) readCache(v, token string, now time.Time) (*Session, error) {
	var payload map[string]any
	var expiresMs float64 // the cache's end, in Unix milliseconds
	var err error
	switch ba.cache {
	case CookieCacheCompact:
		payload, expiresMs, err = ba.openCompact(v)
	case CookieCacheJWT:
		payload, err = ba.openJWT(v, now)
	case CookieCacheJWE:
		payload, err = ba.openJWE(v, now)
	default:
		err = cacheErr("no strategy")
	}
	if err != nil {
		return nil, err
	}
	if ba.cache != CookieCacheCompact {
		// The claims are the payload, with iat, exp and jti.
		expiresMs = payload["exp"].(float64) * 1000 // checked by jwtClaims
	}
	s, sessionToken, version, err := cachedSession(payload)
	if err != nil {
		return nil, err
	}
	nowMs := now.UnixMilli()
	switch {
	case subtle.ConstantTimeCompare([]byte(sessionToken), []byte(token)) != 1:
		return nil, cacheErr("of another session")
	case version != ba.version:
		return nil, cacheErr("of another version")
	case expiresMs < float64(nowMs):
		return nil, cacheErr("expired")
	case s.Expires.UnixMilli() < nowMs:
		return nil, cacheErr("session expired")
	}
	s.token = token
	return s, nil
}

// cachedSession reads the cache's payload ({session, user, updatedAt,
// version}) as Better Auth's schema takes it: a session with a string id,
// token and an ISO expiresAt, a user with string id, email and name,
// optional image, a numeric updatedAt.
func cachedSession(p map[string]any) (s *Session, token, version string, err error) {
	sess, _ := p["session"].(map[string]any)
	user, _ := p["user"].(map[string]any)
	if sess == nil || user == nil {
		return nil, "", "", cacheErr("no session or user")
	}
	if u, ok := p["updatedAt"].(float64); !ok || math.IsInf(u, 0) {
		return nil, "", "", cacheErr("no updatedAt")
	}
	switch v := p["version"].(type) {
	case nil:
		if _, present := p["version"]; present {
			return nil, "", "", cacheErr("version is not a string")
		}
	case string:
		version = v
	default:
		return nil, "", "", cacheErr("version is not a string")
	}
	if version == "" {
		version = "1" // Better Auth compares (version || "1")
	}
	str := func(m map[string]any, k string) (string, bool) { v, ok := m[k].(string); return v, ok }
	// Better Auth's schema requires a string id (userId it coerces to
	// one, whatever it is).
	_, ok1 := str(sess, "id")
	token, ok2 := str(sess, "token")
	expiresAt, ok3 := sess["expiresAt"].(time.Time)
	if !ok1 || !ok2 || !ok3 || !optString(sess, "ipAddress") || !optString(sess, "userAgent") {
		return nil, "", "", cacheErr("malformed session")
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		if v, present := sess[k]; present {
			if _, ok := v.(time.Time); !ok {
				return nil, "", "", cacheErr("malformed session " + k)
			}
		}
	}
	uid, ok1 := str(user, "id")
	email, ok2 := str(user, "email")
	name, ok3 := str(user, "name")
	if !ok1 || !ok2 || !ok3 {
		return nil, "", "", cacheErr("malformed user")
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		if v, present := user[k]; present {
			if _, ok := v.(time.Time); !ok {
				return nil, "", "", cacheErr("malformed user " + k)
			}
		}
	}
	if v, present := user["emailVerified"]; present {
		if _, ok := v.(bool); !ok {
			return nil, "", "", cacheErr("malformed user emailVerified")
		}
	}
	if !optString(user, "image") {
		return nil, "", "", cacheErr("malformed user image")
	}
	var image *string
	if v, ok := user["image"].(string); ok {
		image = &v
	}
	// Better Auth's user schema lowercases the address.
	email = strings.ToLower(email)
	s = &Session{Expires: expiresAt.UTC(), Strategy: auth.StrategyDatabase, email: email}
	s.User = SessionUser{ID: uid, Name: &name, Email: &s.email, Image: image}
	return s, token, version, nil
}

// optString reports whether m[k] is absent, null or a string (zod's
// string().nullish()).
func optString(m map[string]any, k string) bool {
	switch m[k].(type) {
	case nil, string:
		return true
	}
	return false
}

// openCompact verifies a compact cache: base64url of {"session": payload,
// "expiresAt": ms, "signature"}, signed with HMAC-SHA256 (unpadded
// base64url) over JSON.stringify({...payload, expiresAt}) after
// JSON.parse revived its ISO dates, which jsStringify rebuilds.
func (ba *betterAuth) openCompact(v string) (map[string]any, float64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil {
		return nil, 0, cacheErr("not base64url")
	}
	doc, err := parseJS(raw)
	if err != nil {
		return nil, 0, cacheErr("not JSON")
	}
	top, ok := doc.(*jsObject)
	if !ok {
		return nil, 0, cacheErr("not a JSON object")
	}
	payload, ok1 := top.get("session").(*jsObject)
	expiresAt, ok2 := top.get("expiresAt").(float64)
	signature, ok3 := top.get("signature").(string)
	if !ok1 || !ok2 || !ok3 || math.IsInf(expiresAt, 0) {
		return nil, 0, cacheErr("not a compact cookie cache")
	}
	signed := payload.clone()
	signed.set("expiresAt", expiresAt)
	sig, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(signature, "="))
	if err != nil || !hmac.Equal(sig, ba.mac(string(jsStringify(nil, signed)))) {
		return nil, 0, cacheErr("bad signature")
	}
	return payload.plain(), expiresAt, nil
}

// openJWT verifies a jwt cache: an HS256 JWS under the newest secret,
// unexpired (jose's jwtVerify, no clock tolerance).
func (ba *betterAuth) openJWT(v string, now time.Time) (map[string]any, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return nil, cacheErr("not a compact JWS")
	}
	var header struct {
		Alg  string `json:"alg"`
		Crit any    `json:"crit"`
	}
	h, err := decodeB64URL(parts[0])
	if err != nil || json.Unmarshal(h, &header) != nil || header.Alg != "HS256" || header.Crit != nil {
		return nil, cacheErr("not an HS256 JWS")
	}
	sig, err := decodeB64URL(parts[2])
	if err != nil || !hmac.Equal(sig, ba.mac(parts[0]+"."+parts[1])) {
		return nil, cacheErr("bad signature")
	}
	body, err := decodeB64URL(parts[1])
	if err != nil {
		return nil, cacheErr("payload not base64url")
	}
	return jwtClaims(body, now, 0)
}

// decodeB64URL decodes the one spelling of some bytes in unpadded
// base64url: no padding, no line breaks, zero unused bits.
func decodeB64URL(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("line break in base64url")
	}
	return base64.RawURLEncoding.Strict().DecodeString(s)
}

// openJWE opens a jwe cache with the key of the secret whose thumbprint
// is its kid (any secret when it has none), as Better Auth's
// symmetricDecodeJWT does (clock tolerance 15 s).
func (ba *betterAuth) openJWE(v string, now time.Time) (map[string]any, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 5 || parts[1] != "" {
		return nil, cacheErr("not a compact dir JWE")
	}
	for _, p := range parts {
		if _, err := decodeB64URL(p); err != nil {
			return nil, cacheErr("not canonical base64url")
		}
	}
	// jose refuses compression and critical extensions; go-jose would
	// inflate the one.
	var header map[string]any
	h, _ := decodeB64URL(parts[0])
	if json.Unmarshal(h, &header) != nil || header["zip"] != nil || header["crit"] != nil {
		return nil, cacheErr("unsupported JWE header")
	}
	if _, present := header["zip"]; present {
		return nil, cacheErr("unsupported JWE header")
	}
	obj, err := jose.ParseEncryptedCompact(v, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256CBC_HS512})
	if err != nil {
		return nil, cacheErr("not a dir A256CBC-HS512 JWE")
	}
	kid := obj.Header.KeyID
	for i, key := range ba.jweKeys {
		if kid != "" && subtle.ConstantTimeCompare([]byte(kid), []byte(ba.jweKIDs[i])) != 1 {
			continue
		}
		if body, err := obj.Decrypt(key); err == nil {
			return jwtClaims(body, now, 15*time.Second)
		}
	}
	return nil, cacheErr("no secret opens it")
}

// jwtClaims parses a JWT's claims and checks them as jose does: a JSON
// object, numeric iat, nbf and exp, nbf and exp against now within
// tolerance; then Better Auth's getSession refuses a cache whose exp
// (in milliseconds) is past. ISO date strings become time.Time, as Better
// Auth revives them.
func jwtClaims(body []byte, now time.Time, tolerance time.Duration) (map[string]any, error) {
	doc, err := parseJS(body)
	if err != nil {
		return nil, cacheErr("claims not JSON")
	}
	obj, ok := doc.(*jsObject)
	if !ok {
		return nil, cacheErr("claims not a JSON object")
	}
	claims := obj.plain()
	nowSec := float64(now.Unix())
	for _, k := range []string{"iat", "nbf", "exp"} {
		if v, present := claims[k]; present {
			if f, ok := v.(float64); !ok || math.IsInf(f, 0) {
				return nil, cacheErr(k + " not a number")
			}
		}
	}
	if nbf, ok := claims["nbf"].(float64); ok && nbf > nowSec+tolerance.Seconds() {
		return nil, cacheErr("not yet valid")
	}
	exp, ok := claims["exp"].(float64)
	if !ok {
		return nil, cacheErr("no exp claim")
	}
	if exp <= nowSec-tolerance.Seconds() || exp*1000 < float64(now.UnixMilli()) {
		return nil, cacheErr("expired")
	}
	return claims, nil
}

// jsObject is a JSON object as JavaScript's JSON.parse makes it: keys in
// property order (integer keys first, ascending, then the others in the
// order first seen; a repeated key keeps its place and takes the last
// value).
type jsObject struct {
	keys []string
	vals map[string]any
}

func (o *jsObject) get(k string) any { return o.vals[k] }

func (o *jsObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
		if isArrayIndex(k) {
			slices.SortStableFunc(o.keys, compareJSKeys)
		}
	}
	o.vals[k] = v
}

func (o *jsObject) clone() *jsObject {
	return &jsObject{keys: slices.Clone(o.keys), vals: maps.Clone(o.vals)}
}

// plain returns o as a map, its objects maps too, arrays []any.
func (o *jsObject) plain() map[string]any {
	m := make(map[string]any, len(o.keys))
	for _, k := range o.keys {
		m[k] = plainValue(o.vals[k])
	}
	return m
}

func plainValue(v any) any {
	switch v := v.(type) {
	case *jsObject:
		return v.plain()
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plainValue(e)
		}
		return out
	}
	return v
}

// isArrayIndex reports whether k is an array index as JavaScript orders
// property keys: a canonical decimal below 2³²−1.
func isArrayIndex(k string) bool {
	if k == "" || len(k) > 10 || k != "0" && k[0] == '0' {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < math.MaxUint32
}

// compareJSKeys orders array indexes first, ascending; it keeps the
// others where they are (a stable sort).
func compareJSKeys(a, b string) int {
	ai, bi := isArrayIndex(a), isArrayIndex(b)
	switch {
	case ai && bi:
		x, _ := strconv.ParseUint(a, 10, 64)
		y, _ := strconv.ParseUint(b, 10, 64)
		return cmpUint(x, y)
	case ai:
		return -1
	case bi:
		return 1
	}
	return 0
}

func cmpUint(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// maxJSDepth bounds the nesting parseJS accepts.
const maxJSDepth = 64

// parseJS parses one JSON value as Better Auth's safeJSONParse does:
// objects as jsObject, numbers as float64 (±Inf past the range),
// strings that are ISO 8601 UTC times (its reviveDate) as time.Time.
func parseJS(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseJSValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func parseJSValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSDepth {
		return nil, errors.New("nested too deep")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jsObject{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := parseJSValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := parseJSValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, errors.New("unexpected delimiter")
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	case string:
		return reviveDate(t), nil
	}
	return t, nil // bool or nil
}

// isoDate is Better Auth's reviveDate pattern.
var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$`)

// reviveDate turns an ISO 8601 UTC time into a time.Time (millisecond
// precision, as a JavaScript Date), leaving other strings as they are.
func reviveDate(s string) any {
	if !isoDate.MatchString(s) {
		return s
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.Truncate(time.Millisecond)
}

// jsStringify appends v as JavaScript's JSON.stringify writes it: keys in
// property order, times as Date.prototype.toISOString, numbers as
// Number.prototype.toString, and only quotes, backslashes and control
// characters escaped.
func jsStringify(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case float64:
		return appendJSNumber(b, v)
	case string:
		return appendJSString(b, v)
	case time.Time:
		b = append(b, '"')
		b = appendExpires(b, v.UTC())
		return append(b, '"')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsStringify(b, e)
		}
		return append(b, ']')
	case *jsObject:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSString(b, k)
			b = append(b, ':')
			b = jsStringify(b, v.vals[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

// appendJSString appends s quoted as JSON.stringify does.
func appendJSString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// appendJSNumber appends f as Number.prototype.toString writes it (null
// for ±Inf, as JSON.stringify does).
func appendJSNumber(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0')
	case f < 0:
		b = append(b, '-')
		f = -f
	}
	// The shortest digits that round-trip, and the exponent n with
	// f = 0.digits × 10ⁿ.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n, k := x+1, len(digits)
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}
