package handler

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// providerJSON is one entry of GET /providers.
type providerJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	SigninURL   string `json:"signinUrl"`
	CallbackURL string `json:"callbackUrl"`
}

// serveProviders answers GET /providers: an object of the providers by id,
// in configuration order.
func (h *Handler) serveProviders(w http.ResponseWriter, r *http.Request, _ string) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range h.providers {
		c := p.Common()
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c.ID)
		v, _ := json.Marshal(providerJSON{ID: c.ID, Name: c.Name, Type: string(c.Type),
			SigninURL: h.base + "/signin/" + pathEscape(c.ID), CallbackURL: h.base + "/callback/" + pathEscape(c.ID)})
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b.Bytes())
}

// serveCSRF answers GET /csrf: {"csrfToken":…}, setting the CSRF cookie when
// the request has no valid one.
func (h *Handler) serveCSRF(w http.ResponseWriter, r *http.Request, _ string) {
	token, _ := h.csrf(w, r, "")
	writeJSON(w, http.StatusOK, map[string]string{"csrfToken": token}, true)
}

// checkCSRF parses the form, checks the POST's CSRF token and answers the
// refusal itself (MissingCSRF) when it fails.
func (h *Handler) checkCSRF(w http.ResponseWriter, r *http.Request) (string, bool) {
	if !h.form(w, r) {
		return "", false
	}
	submitted := r.PostFormValue("csrfToken")
	if submitted == "" && isJSON(r) {
		submitted = h.jsonCSRF(r)
	}
	token, ok := h.csrf(w, r, submitted)
	if !ok {
		h.fail(w, r, ErrorMissingCSRF, nil)
		return "", false
	}
	return token, true
}

// jsonCSRF reads csrfToken from a JSON body (session update).
func (h *Handler) jsonCSRF(r *http.Request) string {
	var body struct {
		CSRFToken string `json:"csrfToken"`
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return ""
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	return body.CSRFToken
}

// serveSession answers GET /session (and POST with a CSRF token, Auth.js's
// update): the session JSON, or null when signed out. It extends the
// session per UpdateAge and refreshes its cookie: a database session's
// expiry when auth.Auth.Session extended it, a JWT re-issued with a new
// exp. The JWT callback runs on every read (trigger refresh) and on POST
// (trigger update, with the client's data); the Session callback shapes
// the JSON; the session event runs last.
func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, _ string) {
	force := false
	var update any
	if r.Method == http.MethodPost {
		if !h.form(w, r) {
			return
		}
		submitted := r.PostFormValue("csrfToken")
		if submitted == "" && isJSON(r) {
			submitted, update = h.jsonUpdate(r)
		}
		if _, ok := h.csrf(w, r, submitted); !ok {
			// Auth.js answers a failed update with 400 and null: it is
			// an API route, not a page.
			h.log.InfoContext(r.Context(), "authport: session update refused", "error_code", ErrorMissingCSRF)
			writeJSON(w, http.StatusBadRequest, nil, true)
			return
		}
		force = true
	}
	// A GET sets no CSRF cookie (Auth.js sets one on every request
	// without): only a POST needs one, and every client that posts gets
	// its token from /csrf or a page, which set the cookie.
	ctx := r.Context()
	token, claims, hadCookie := h.presented(ctx, r)
	if token == "" && claims == nil {
		if hadCookie {
			h.clearSession(w, r)
		}
		writeJSON(w, http.StatusOK, nil, true)
		return
	}
	// One call reads the session, extends or re-issues it when due, and
	// shapes it.
	st, ok, err := h.auth.Edge().ReadSession(ctx, auth.SessionRequest{
		Token: token, Claims: claims, Update: force, Data: update, Shape: true, Issuer: issuer{h},
	})
	if err != nil {
		h.log.ErrorContext(ctx, "authport: session not read", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the session could not be read"}, true)
		return
	}
	if !ok {
		h.clearSession(w, r)
		writeJSON(w, http.StatusOK, nil, true)
		return
	}
	switch {
	case st.Extended:
		h.writeSessionCookie(w, st.Session)
	case st.Token != "":
		h.writeSessionJWT(w, r, st.Token)
	}
	if st.Body != nil {
		writeJSON(w, http.StatusOK, st.Body, true)
		return
	}
	writeJSON(w, http.StatusOK, h.sessionOf(st), true)
}

// issuer is the handler's auth.SessionIssuer: its codec and session JSON.
type issuer struct{ h *Handler }

// IssueSession encodes a re-issued JWT session.
func (i issuer) IssueSession(claims map[string]any) (string, map[string]any, error) {
	token, err := i.h.codec.Encode(i.h.names.SessionToken, claims, i.h.sessions.MaxAge)
	if err != nil {
		return "", nil, err
	}
	issued, err := i.h.codec.Decode(i.h.names.SessionToken, token)
	return token, issued, err
}

// SessionJSON is the session's default JSON as a map, for the Session
// callback to change.
func (i issuer) SessionJSON(st auth.SessionState) (map[string]any, error) {
	return sessionMap(i.h.sessionOf(st))
}

// sessionOf is the Session core/auth read. A JWT re-issued by this read
// expires MaxAge from now, to the millisecond, as Auth.js answers (its
// exp claim keeps whole seconds); one not re-issued at its exp.
func (h *Handler) sessionOf(st auth.SessionState) *Session {
	if st.User != nil {
		s := sessionFromUser(st.User, st.Session.Expires)
		s.extended, s.token = st.Extended, st.Session.SessionToken
		return s
	}
	s := sessionFromClaims(st.Claims)
	if st.Token != "" {
		s.Expires = h.now().Add(h.sessions.MaxAge).Truncate(time.Millisecond).UTC()
	}
	return s
}

// sessionMap is the session's default JSON as a map, for the Session
// callback to change.
func sessionMap(s *Session) (map[string]any, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

// jsonUpdate reads csrfToken and data from a JSON body (Auth.js's
// update(data) posts {"csrfToken":…,"data":…}).
func (h *Handler) jsonUpdate(r *http.Request) (string, any) {
	var body struct {
		CSRFToken string `json:"csrfToken"`
		Data      any    `json:"data"`
	}
	data, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(data, &body) != nil {
		return "", nil
	}
	return body.CSRFToken, body.Data
}

// issueSession gives the browser the session of a completed sign-in: the
// cookie of the database session core/auth created, or a new JWT (through
// the JWT callback, trigger signIn or signUp). A caller who was signed in
// already keeps the cookie they have.
func (h *Handler) issueSession(w http.ResponseWriter, r *http.Request, si *auth.SignIn) error {
	if si.Pending != nil {
		// complete answers these: a pending sign-in has no session.
		return errors.New("a pending sign-in reached the session cookie")
	}
	if si.KeepSession {
		return nil
	}
	if h.sessions.Strategy != auth.StrategyJWT {
		if si.Session.SessionToken == "" {
			return errors.New("the sign-in made no database session")
		}
		h.writeSessionCookie(w, si.Session)
		return nil
	}
	if si.Claims == nil {
		return errors.New("the sign-in made no JWT claims")
	}
	token, err := h.codec.Encode(h.names.SessionToken, si.Claims, h.sessions.MaxAge)
	if err != nil {
		return err
	}
	h.writeSessionJWT(w, r, token)
	return nil
}

// denied answers a sign-in the SignIn callback refused: a redirect where
// the callback sent it, or the AccessDenied error. It reports whether err
// was such a refusal.
func (h *Handler) denied(w http.ResponseWriter, r *http.Request, err error) bool {
	var d *auth.DeniedError
	if !errors.As(err, &d) {
		return false
	}
	if d.Redirect != "" {
		h.log.InfoContext(r.Context(), "authport: sign-in redirected by the SignIn callback", "provider", d.ProviderID)
		h.redirect(w, r, d.Redirect)
		return true
	}
	h.fail(w, r, ErrorAccessDenied, err)
	return true
}

// serveSignIn answers POST /signin/{provider}: an OAuth/OIDC provider
// redirects to the provider, an e-mail provider sends the link and
// redirects to verify-request. GET shows that provider's page
// (serveProviderPage).
func (h *Handler) serveSignIn(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodPost {
		h.serveProviderPage(w, r, id)
		return
	}
	if _, ok := h.checkCSRF(w, r); !ok {
		return
	}
	p, ok := h.byID[id]
	if !ok {
		h.unknownProvider(w, r)
		return
	}
	h.callbackURL(w, r)
	ctx := r.Context()
	switch c := p.Common(); c.Type {
	case provider.TypeOAuth, provider.TypeOIDC:
		if !h.allow(w, r, signInAttempt, "") {
			return
		}
		to, err := h.beginOAuth(w, r, id)
		if err != nil {
			h.fail(w, r, errorCode(err), err)
			return
		}
		h.redirect(w, r, to)
	case provider.TypeEmail:
		var identifier string
		if ec, ok := p.(*provider.EmailConfig); ok {
			identifier, _ = ec.Normalize(r.PostFormValue("email"))
		}
		if !h.allow(w, r, emailAttempt, identifier) {
			return
		}
		if _, err := h.auth.StartEmailSignIn(ctx, id, r.PostFormValue("email")); err != nil {
			h.failEmailStart(w, r, err)
			return
		}
		h.redirect(w, r, h.pageURL(h.pages.VerifyRequest, "verify-request")+"?provider="+queryEscape(id)+"&type=email")
	default:
		// Credentials and passkeys post to /callback/{id}; the page
		// shows their forms.
		h.redirect(w, r, h.pageURL(h.pages.SignIn, "signin"))
	}
}

// admitCallback answers a callback request made with another method than
// method (405), a POST without its CSRF token, or one over the sign-in
// limits for the identifier it names (identifier(r); "" when identifier is
// nil), and returns false; it returns true when the callback may go on.
func (h *Handler) admitCallback(w http.ResponseWriter, r *http.Request, method string, identifier func(*http.Request) string) bool {
	return h.admit(w, r, method, identifier, h.checkCSRF)
}

// admit is admitCallback with the POST's reader and CSRF check: checkCSRF
// for a form, or postFields for the routes that also take JSON fields.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, method string, identifier func(*http.Request) string, check func(http.ResponseWriter, *http.Request) (string, bool)) bool {
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "MethodNotAllowed"}, true)
		return false
	}
	if method == http.MethodPost {
		if _, ok := check(w, r); !ok {
			return false
		}
	}
	id := ""
	if identifier != nil {
		id = identifier(r)
	}
	return h.allow(w, r, signInAttempt, id)
}

// serveCallback answers GET|POST /callback/{provider}.
func (h *Handler) serveCallback(w http.ResponseWriter, r *http.Request, id string) {
	p, ok := h.byID[id]
	if !ok {
		h.unknownProvider(w, r)
		return
	}
	// A session this sign-in creates records the client it came from;
	// a trusted browser skips the second factor.
	r = r.WithContext(h.withClient(r))
	ctx := r.Context()
	var si *auth.SignIn
	var err error
	stageErr := errorCode
	switch p.Common().Type {
	case provider.TypeOAuth, provider.TypeOIDC:
		// The signed-in user, whichever the strategy: a new account is
		// linked to them.
		current, _, serr := h.session(ctx, r)
		if serr != nil {
			h.fail(w, r, ErrorConfiguration, serr)
			return
		}
		si, err = h.oauthCallback(w, r, id, currentUser(current))
	case provider.TypeEmail:
		if !h.admitCallback(w, r, http.MethodGet, nil) {
			return
		}
		q := r.URL.Query()
		si, err = h.auth.VerifyEmailSignIn(ctx, id, q.Get("email"), q.Get("token"))
	case provider.TypeCredentials:
		if !h.admitCallback(w, r, http.MethodPost, credentialsIdentifier) {
			return
		}
		si, err = h.credentials(r, id, p.(*provider.CredentialsConfig))
		stageErr = func(e error) string {
			if errors.Is(e, errCredentials) {
				return ErrorCredentialsSignin
			}
			// Authorize failed to decide (Auth.js: CallbackRouteError).
			return ErrorConfiguration
		}
	case provider.TypePassword:
		// Its fields may come as JSON too (postFields).
		if !h.admit(w, r, http.MethodPost, credentialsIdentifier, h.checkFields) {
			return
		}
		si, err = h.auth.Passwords().SignIn(ctx, h.passwordSignIn(w, r))
	case provider.TypeWebAuthn:
		if !h.admitCallback(w, r, http.MethodPost, nil) {
			return
		}
		current, _, serr := h.session(ctx, r)
		if serr != nil {
			h.fail(w, r, ErrorConfiguration, serr)
			return
		}
		si, err = h.passkeyCallback(w, r, id, currentUser(current))
		// A refusal carries its code; a store failure is Configuration.
		stageErr = func(e error) string { return string(auth.CodeOf(e)) }
	}
	if err == nil && si == nil {
		err = errors.New("the sign-in returned no user")
	}
	if err != nil {
		if !h.denied(w, r, err) {
			h.fail(w, r, stageErr(err), err)
		}
		return
	}
	if !h.complete(w, r, si) {
		return
	}
	h.redirect(w, r, h.callbackURL(w, r))
}

// errCredentials: Authorize refused the credentials.
var errCredentials = errors.New("credentials refused")

// credentials runs the provider's Authorize with the posted fields, then
// core/auth's credentials sign-in (the SignIn callback).
func (h *Handler) credentials(r *http.Request, id string, p *provider.CredentialsConfig) (*auth.SignIn, error) {
	creds := map[string]string{}
	for k, v := range r.PostForm {
		if k == "csrfToken" || k == "callbackUrl" || len(v) == 0 {
			continue
		}
		creds[k] = v[0]
	}
	u, err := p.Authorize(r.Context(), provider.AuthorizeRequest{Credentials: creds, Request: r})
	if err != nil {
		return nil, err
	}
	if u == nil || u.ID == "" {
		return nil, errCredentials
	}
	// The address in the session is in the one normal form, as every
	// address authport keeps; one it cannot normalise is left as the
	// application gave it.
	if normal, err := auth.NormalizeEmail(u.Email); err == nil {
		u.Email = normal
	}
	return h.auth.SignInWithCredentials(r.Context(), id, u.CoreUser(u.ID), creds)
}

// serveSignOut answers GET /signout (a confirmation page posting back) and
// POST /signout (CSRF-checked: deletes the database session, clears the
// cookie, redirects to callbackUrl).
func (h *Handler) serveSignOut(w http.ResponseWriter, r *http.Request, _ string) {
	if r.Method != http.MethodPost {
		if h.pages.SignOut != "" {
			h.redirect(w, r, withQuery(h.pages.SignOut, r.URL.RawQuery))
			return
		}
		token, _ := h.csrf(w, r, "")
		h.render(w, http.StatusOK, "signout", h.pageData(r, token, h.callbackURL(w, r)))
		return
	}
	if _, ok := h.checkCSRF(w, r); !ok {
		return
	}
	var token string
	var claims map[string]any
	if h.sessions.Strategy == auth.StrategyDatabase {
		token = h.sessionToken(r)
	} else if s, _, _ := h.session(r.Context(), r); s != nil {
		claims = s.Claims
	}
	if err := h.auth.Edge().EndSession(r.Context(), token, claims); err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	if err := h.endOtherSessions(w, r); err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return
	}
	h.clearSession(w, r)
	h.redirect(w, r, h.callbackURL(w, r))
}

// serveVerifyRequest answers GET /verify-request: "check your e-mail".
func (h *Handler) serveVerifyRequest(w http.ResponseWriter, r *http.Request, _ string) {
	if h.pages.VerifyRequest != "" {
		h.redirect(w, r, withQuery(h.pages.VerifyRequest, r.URL.RawQuery))
		return
	}
	h.render(w, http.StatusOK, "verify", h.verifyPageData(w, r))
}

// serveError answers GET /error?error=code with the error page and
// Auth.js's status for the code.
func (h *Handler) serveError(w http.ResponseWriter, r *http.Request, _ string) {
	if h.pages.Error != "" {
		h.redirect(w, r, withQuery(h.pages.Error, r.URL.RawQuery))
		return
	}
	d := h.pageData(r, "", "")
	h.render(w, errorStatus(d.Error), "error", d)
}

// serveSignInPage answers GET /signin: the default sign-in page.
func (h *Handler) serveSignInPage(w http.ResponseWriter, r *http.Request, _ string) {
	if h.pages.SignIn != "" {
		h.redirect(w, r, withQuery(h.pages.SignIn, r.URL.RawQuery))
		return
	}
	token, _ := h.csrf(w, r, "")
	h.render(w, http.StatusOK, "signin", h.pageData(r, token, h.callbackURL(w, r)))
}

// serveWebAuthnOptions answers GET /webauthn-options/{provider}.
func (h *Handler) serveWebAuthnOptions(w http.ResponseWriter, r *http.Request, id string) {
	p, ok := h.byID[id]
	if !ok || p.Common().Type != provider.TypeWebAuthn {
		writeJSON(w, http.StatusNotFound, errorBody{Error: "UnknownProvider", Message: "no WebAuthn provider has this id"}, true)
		return
	}
	current, _, err := h.session(r.Context(), r)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the session could not be read"}, true)
		return
	}
	body, err := h.passkeyOptions(w, r, id, currentUser(current))
	if code := auth.CodeOf(err); code == auth.CodeConfiguration {
		h.log.ErrorContext(r.Context(), "authport: passkey options failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: ErrorConfiguration, Message: "passkey options could not be made"}, true)
		return
	} else if err != nil {
		h.log.InfoContext(r.Context(), "authport: passkey options refused", "error", err)
		writeJSON(w, http.StatusBadRequest, errorBody{Error: string(code), Message: "passkey options could not be made"}, true)
		return
	}
	writeJSON(w, http.StatusOK, body, true)
}

// servePasskeyScript answers GET /passkey.js.
func (h *Handler) servePasskeyScript(w http.ResponseWriter, r *http.Request, _ string) {
	if h.passkeys == nil {
		h.notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(h.passkeys.Script())
}

// failEmailStart answers an e-mail sign-in (link or code) that could not
// start: a refusal of the SignIn callback as such, anything else as
// EmailSignin (a configuration error too: the visitor can do nothing about
// it, and the log has the cause).
func (h *Handler) failEmailStart(w http.ResponseWriter, r *http.Request, err error) {
	if h.denied(w, r, err) {
		return
	}
	code := errorCode(err)
	if code == ErrorConfiguration {
		code = ErrorEmailSignin
	}
	h.fail(w, r, code, err)
}
