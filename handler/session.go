package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/jwt"
)

// Session is the session of a request, whichever the strategy: what
// Auth.js's GET /session answers ({"user":{"name","email","image"},"expires"}),
// plus the user's id and, for JWT sessions, every claim of the token.
type Session struct {
	// User is the signed-in user.
	User SessionUser
	// Expires is when the session ends unless it is extended.
	Expires time.Time
	// Strategy is how the session is kept: auth.StrategyDatabase or
	// auth.StrategyJWT.
	Strategy auth.Strategy
	// Claims are the JWT's claims (name, email, picture, sub, iat, exp,
	// jti and any the application added); nil for database sessions.
	Claims map[string]any
	// Bearer reports that the session was read from an "Authorization:
	// Bearer" header (ReaderConfig.Bearer), not from the session cookie.
	Bearer bool

	// user is the database session's user (the adapter's record, not
	// copied); extended reports that reading the database session
	// extended it (auth.Auth.Session), token is its token.
	user     *core.User
	email    string // User.Email's target, apart from the user's
	extended bool
	token    string
	// auth reads the authentication (Authentication); nil for a Reader
	// without an Auth.
	auth *auth.Auth
}

// SessionUser is the user of a session.
type SessionUser struct {
	// ID is the user's id: the database user's id, or the JWT's "sub".
	// It is not part of the session JSON, as in Auth.js.
	ID string
	// Name, Email and Image are the user's; nil when unknown.
	Name, Email, Image *string
}

// expiresLayout is how Auth.js writes expires: Date.prototype.toISOString.
const expiresLayout = "2006-01-02T15:04:05.000Z"

// MarshalJSON writes the session as Auth.js's /session answers it: with
// database sessions every user field (null when unknown), with JWT sessions
// the fields the token has (null for a null claim), and expires as an ISO 8601 UTC time with
// milliseconds.
func (s Session) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 160)), nil
}

// appendJSON appends the session's JSON (MarshalJSON) to b.
func (s *Session) appendJSON(b []byte) []byte {
	b = append(b, `{"user":{`...)
	first := true
	field := func(name, claim string, v *string) {
		if v == nil && s.Strategy == auth.StrategyJWT {
			// Auth.js writes a null claim as null and leaves out a
			// missing one.
			if c, ok := s.Claims[claim]; !ok || c != nil {
				return
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, name...) // a quoted key
		b = append(b, ':')
		if v == nil {
			b = append(b, "null"...)
			return
		}
		b = appendJSONString(b, *v)
	}
	field(`"name"`, "name", s.User.Name)
	field(`"email"`, "email", s.User.Email)
	field(`"image"`, "picture", s.User.Image)
	b = append(b, `},"expires":"`...)
	b = appendExpires(b, s.Expires.UTC())
	return append(b, `"}`...)
}

// appendExpires appends t (UTC) as expiresLayout does, without going
// through time's layout interpreter for the years 0 to 9999.
func appendExpires(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, expiresLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// appendJSONString appends v as encoding/json writes it: as is between
// quotes when every byte is printable ASCII that needs no escape (the
// common case, without allocating), else through json.Marshal (which
// escapes quotes, backslashes, control characters, <, >, &, U+2028,
// U+2029 and invalid UTF-8).
func appendJSONString(b []byte, v string) []byte {
	// The bytes of 0x00–0x7f that encoding/json escapes: the control
	// characters, '"', '&', '<' and '>' (below 0x40, bit c of escLow) and
	// '\\' (bit c-0x40 of escHigh); every byte from 0x80 up takes
	// json.Marshal too (UTF-8 checks, U+2028 and U+2029).
	const (
		escLow  uint64 = 1<<0x20 - 1 | 1<<'"' | 1<<'&' | 1<<'<' | 1<<'>'
		escHigh uint64 = 1 << ('\\' - 0x40)
	)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x80 || c < 0x40 && escLow>>c&1 != 0 || c >= 0x40 && escHigh>>(c-0x40)&1 != 0 {
			q, _ := json.Marshal(v)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// CoreUser returns the session's user as a core.User: with database
// sessions a copy of the stored user, application fields ([core.User.Data],
// e.g. a role read with [core.UserField]) included; with JWT sessions the
// token's ID, Name, Email and Image (application fields there are claims:
// see Claims).
func (s *Session) CoreUser() *core.User {
	if s.user != nil {
		u := s.user.Clone()
		return &u
	}
	u := &core.User{ID: s.User.ID, Name: s.User.Name, Image: s.User.Image}
	if s.User.Email != nil {
		u.Email = *s.User.Email
	}
	return u
}

// ReaderConfig configures a Reader.
type ReaderConfig struct {
	// Auth is the configured library. Required for database sessions (it
	// looks the session token up); may be nil for JWT sessions only.
	Auth *auth.Auth
	// Secrets decrypt JWT session cookies, newest first: the same
	// AUTH_SECRET as the Auth.js app whose cookies are read. Required for
	// JWT sessions when Auth is nil; empty means the Auth's.
	Secrets []string
	// AllowShortSecrets accepts Secrets shorter than auth.MinSecretLength
	// (32) bytes, for development only; with Auth set, its own
	// auth.Config.AllowShortSecrets applies as well.
	AllowShortSecrets bool
	// Strategy is the session strategy; empty means the Auth's, or
	// auth.StrategyJWT when Auth is nil.
	Strategy auth.Strategy
	// Secure says the site is served over https, so the cookie names carry
	// the __Secure- prefix (as Auth.js names them) and cookies without it are
	// ignored.
	Secure bool
	// SignInURL is where Reader.Require sends a browser that is not signed
	// in, with a callbackUrl parameter; empty means "/api/auth/signin",
	// Auth.js's default under Next.js.
	SignInURL string
	// ReauthURL is where RequireFresh sends a browser whose session is not
	// fresh enough, with a callbackUrl parameter; empty means
	// "/api/auth/reauth". The handler's is {base}/reauth.
	ReauthURL string
	// Logger receives debug and error records; nil means slog.Default(),
	// read when NewReader runs. It never receives tokens or secrets.
	Logger *slog.Logger
	// Now is the clock for JWT expiry; nil means the Auth's clock, or
	// time.Now when Auth is nil.
	Now func() time.Time
	// Bearer makes Session, Middleware and Require also read the session
	// from an "Authorization: Bearer <token>" header, for API clients
	// (mobile apps, scripts, other services) that cannot keep cookies:
	// the token is what the session cookie holds, a database session's
	// token or, with JWT sessions, the encrypted JWT. Off by default. A
	// request that carries the session cookie is read from the cookie
	// alone, whatever its Authorization header says. See the README
	// ("Bearer sessions") for when to turn it on.
	Bearer bool
	// BetterAuth, when set, reads Better Auth's session cookies instead
	// of Auth.js's: its signed session token and, optionally, its cookie
	// cache (see [BetterAuthCookies]). Nil (the default) reads Auth.js's.
	BetterAuth *BetterAuthCookies
}

// Reader reads the Auth.js session of a request, database or JWT, without
// serving any route: for a Go API sitting behind an application that signs
// users in with Auth.js (same secret, same cookie names) or with Handler.
// It is safe for concurrent use.
type Reader struct {
	auth      *auth.Auth
	codec     *jwt.Codec
	strategy  auth.Strategy
	secure    bool
	names     cookieNames
	signInURL string
	reauthURL string
	log       *slog.Logger
	now       func() time.Time
	bearer    bool
	ba        *betterAuth // ReaderConfig.BetterAuth; nil: Auth.js's cookies
}

// NewReader checks cfg and returns a Reader. The error says which field to
// fix.
func NewReader(cfg ReaderConfig) (*Reader, error) {
	r := &Reader{
		auth:      cfg.Auth,
		strategy:  cfg.Strategy,
		secure:    cfg.Secure,
		names:     cookieNamesFor(cfg.Secure),
		signInURL: cfg.SignInURL,
		reauthURL: cfg.ReauthURL,
		log:       cfg.Logger,
		now:       cfg.Now,
		bearer:    cfg.Bearer,
	}
	if cfg.BetterAuth != nil {
		if err := r.useBetterAuth(cfg); err != nil {
			return nil, err
		}
	}
	if r.strategy == "" {
		if cfg.Auth != nil {
			r.strategy = cfg.Auth.Settings().Session.Strategy
		} else {
			r.strategy = auth.StrategyJWT
		}
	}
	switch r.strategy {
	case auth.StrategyDatabase:
		if cfg.Auth == nil && r.ba == nil {
			return nil, fmt.Errorf("%w: database sessions need ReaderConfig.Auth to look sessions up", core.ErrInvalidConfig)
		}
	case auth.StrategyJWT:
	default:
		return nil, fmt.Errorf("%w: Strategy %q is neither %q nor %q", core.ErrInvalidConfig, r.strategy, auth.StrategyDatabase, auth.StrategyJWT)
	}
	if len(cfg.Secrets) == 0 && cfg.Auth != nil {
		cfg.Secrets = cfg.Auth.Settings().Secrets
	}
	if r.now == nil && cfg.Auth != nil {
		r.now = cfg.Auth.Settings().Now
	}
	if r.strategy == auth.StrategyJWT || len(cfg.Secrets) > 0 {
		check := func(s []string) error { return auth.CheckSecrets(s, cfg.AllowShortSecrets) }
		if cfg.Auth != nil && !cfg.AllowShortSecrets {
			check = cfg.Auth.Edge().CheckSecrets
		}
		if err := check(cfg.Secrets); err != nil {
			return nil, fmt.Errorf("%w: Secrets: %w (give the AUTH_SECRET of the app, newest first)", core.ErrInvalidConfig, err)
		}
		c, err := jwt.NewCodec(cfg.Secrets...)
		if err != nil {
			return nil, fmt.Errorf("%w: Secrets: %w (give the AUTH_SECRET of the app, newest first)", core.ErrInvalidConfig, err)
		}
		r.codec = c
	}
	if r.signInURL == "" {
		r.signInURL = "/api/auth/signin"
	}
	if r.reauthURL == "" {
		r.reauthURL = "/api/auth/reauth"
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.codec != nil {
		r.codec = r.codec.WithClock(r.now)
	}
	return r, nil
}

// Session returns the session of the request, or nil and no error when the
// request is not signed in (no cookie, or an unknown, expired, tampered or
// foreign one). An error means the session could not be looked up (the
// store failed). With database sessions the lookup extends the session in
// the store per UpdateAge, as Auth.js does; the Reader writes no cookie.
//
// With ReaderConfig.Bearer, a request without the session cookie is read
// from its "Authorization: Bearer" header instead (Session.Bearer set); a
// malformed header, or a token that is no session, reads as signed out.
func (rd *Reader) Session(r *http.Request) (*Session, error) {
	s, _, err := rd.read(r.Context(), r)
	return s, err
}

// read is Session; bearer reports that the request presented a bearer
// token (and had no session cookie), whether or not it was a session.
func (rd *Reader) read(ctx context.Context, r *http.Request) (s *Session, bearer bool, err error) {
	if rd.bearer && len(r.Header["Authorization"]) > 0 && !carriesCookie(r, rd.names.SessionToken) {
		if token, ok := bearerToken(r.Header["Authorization"]); ok {
			s, err = rd.bearerSession(ctx, token)
			return s, true, err
		}
		if isBearer(r.Header["Authorization"]) {
			rd.log.DebugContext(ctx, "authport: malformed bearer token ignored")
			return nil, true, nil
		}
	}
	s, _, err = rd.session(ctx, r)
	return s, false, err
}

// session reads the session cookie's session; hadCookie reports that
// the request carried one, valid or not.
func (rd *Reader) session(ctx context.Context, r *http.Request) (s *Session, hadCookie bool, err error) {
	if rd.ba != nil {
		return rd.betterAuthSession(ctx, r)
	}
	token, claims, hadCookie := rd.presented(ctx, r)
	switch {
	case claims != nil:
		s = sessionFromClaims(claims)
		s.auth = rd.auth
		return s, true, nil
	case token == "":
		return nil, hadCookie, nil
	}
	s, err = rd.databaseSession(ctx, token)
	return s, true, err
}

// presented reads what the session cookie holds, without a store: a
// database session's token, or a JWT session's claims (nil when the
// cookie cannot be opened: expired, tampered with, or another secret's).
// hadCookie reports that the request carried the cookie.
func (rd *Reader) presented(ctx context.Context, r *http.Request) (token string, claims map[string]any, hadCookie bool) {
	if rd.strategy != auth.StrategyJWT {
		token = rd.sessionToken(r)
		return token, nil, token != ""
	}
	var err error
	if v, ok := cookieValue(r, rd.names.SessionToken); ok {
		// The unsplit cookie wins over chunks (jwt.JoinCookies).
		claims, err = rd.codec.Decode(rd.names.SessionToken, v)
	} else {
		claims, err = rd.codec.DecodeCookie(r, rd.names.SessionToken)
	}
	switch {
	case errors.Is(err, http.ErrNoCookie):
		return "", nil, false
	case err != nil:
		rd.log.DebugContext(ctx, "authport: JWT session cookie ignored", "reason", errReason(err))
		return "", nil, true
	}
	return "", claims, true
}

// databaseSession looks the database session token up (one
// getSessionAndUser; an unknown token costs nothing more).
func (rd *Reader) databaseSession(ctx context.Context, token string) (*Session, error) {
	su, extended, err := rd.auth.Session(ctx, token)
	if err != nil {
		rd.log.ErrorContext(ctx, "authport: session lookup failed", "error", err)
		return nil, fmt.Errorf("handler: reading the session: %w", err)
	}
	if su == nil {
		return nil, nil
	}
	s := sessionFromUser(&su.User, su.Session.Expires)
	s.extended, s.token, s.auth = extended, token, rd.auth
	return s, nil
}

// sessionToken reads the database session token from the session cookie
// (jwt's cookie name: with Secure only the __Secure- cookie counts, so that
// a cookie planted over plain HTTP is ignored), or "".
func (rd *Reader) sessionToken(r *http.Request) string {
	if rd.ba != nil {
		token, _ := rd.ba.sessionToken(r)
		return token
	}
	v, _ := cookieValue(r, rd.names.SessionToken)
	return strings.TrimSpace(v)
}

func errReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrExpiredToken):
		return "expired"
	case errors.Is(err, jwt.ErrInvalidToken):
		return "invalid"
	}
	return "unreadable"
}

// sessionFromUser makes a database session's Session in one allocation,
// keeping u (the adapter's record of the lookup) as its user.
func sessionFromUser(u *core.User, expires time.Time) *Session {
	s := &Session{Expires: expires, Strategy: auth.StrategyDatabase, user: u, email: u.Email}
	s.User = SessionUser{ID: u.ID, Name: u.Name, Email: &s.email, Image: u.Image}
	return s
}

func sessionFromClaims(claims map[string]any) *Session {
	str := func(k string) *string {
		if v, ok := claims[k].(string); ok {
			return &v
		}
		return nil
	}
	s := &Session{Strategy: auth.StrategyJWT, Claims: claims}
	s.User.Name, s.User.Email, s.User.Image = str("name"), str("email"), str("picture")
	if sub := str("sub"); sub != nil {
		s.User.ID = *sub
	}
	if exp, ok := claims["exp"].(float64); ok {
		s.Expires = time.Unix(int64(exp), 0).UTC()
	}
	return s
}

type ctxKey struct{}

// WithSession returns a copy of ctx carrying s, as Middleware does.
func WithSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the session Middleware put in ctx; ok is false when
// the request is not signed in.
func FromContext(ctx context.Context) (*Session, bool) {
	s, ok := ctx.Value(ctxKey{}).(*Session)
	return s, ok && s != nil
}

// Middleware reads the session of each request (Reader.Session) and puts
// it in the request's context for FromContext; a request that is not
// signed in goes on without one. When the store fails, it answers 500 and
// does not call next.
func (rd *Reader) Middleware(next http.Handler) http.Handler {
	return rd.withRead(next, func(w http.ResponseWriter, r *http.Request, _ bool) { next.ServeHTTP(w, r) })
}

// withRead returns the middleware around next that reads each request's
// session: a request whose context already holds one goes on to next
// as it is; one whose store fails gets 500; a request with a session goes
// to next with the session in its context, and one without to none (told
// whether it presented a bearer token).
func (rd *Reader) withRead(next http.Handler, none func(w http.ResponseWriter, r *http.Request, bearer bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := FromContext(r.Context()); ok {
			next.ServeHTTP(w, r)
			return
		}
		s, bearer, err := rd.read(r.Context(), r)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the session could not be read"}, true)
			return
		}
		if s != nil {
			next.ServeHTTP(w, r.WithContext(WithSession(r.Context(), s)))
			return
		}
		none(w, r, bearer)
	})
}

// Require lets only signed-in requests through to next, with the session
// in the context. Others get 401 with a JSON body when they are API
// requests (their Accept header does not ask for text/html, or they
// presented a bearer token), and a 303 redirect to the sign-in page, with
// the request's URL as callbackUrl, when they come from a browser page.
// The 401's WWW-Authenticate names the Cookie scheme and, with
// ReaderConfig.Bearer, the Bearer scheme (error="invalid_token" when the
// request's bearer token was malformed or no session).
func (rd *Reader) Require(next http.Handler) http.Handler {
	return rd.withRead(next, func(w http.ResponseWriter, r *http.Request, bearer bool) {
		if bearer || !wantsHTML(r) {
			w.Header().Add("WWW-Authenticate", `Cookie realm="authport"`)
			switch {
			case bearer:
				w.Header().Add("WWW-Authenticate", `Bearer realm="authport", error="invalid_token"`)
			case rd.bearer:
				w.Header().Add("WWW-Authenticate", `Bearer realm="authport"`)
			}
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: "Unauthorized", Message: "sign in to use this resource"}, true)
			return
		}
		target := rd.signInURL
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		http.Redirect(w, r, target+sep+"callbackUrl="+queryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	})
}

func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
