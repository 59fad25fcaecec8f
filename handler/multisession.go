package handler

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// Several accounts signed in in one browser (Config.MultiSession), with
// database sessions. The cookie layout:
//
//   - the session cookie (authjs.session-token, or __Secure-… on https)
//     holds the active session's token, exactly as with one account, so
//     that everything that reads one session (Auth.js's own packages
//     included) reads the active one;
//   - authport.other-sessions (__Secure-… on https) holds the tokens of
//     the browser's other signed-in sessions, joined by ".", newest first;
//     HttpOnly, with the session cookie's attributes; at most
//     MultiSession-1 of them.
//
// The routes, under the handler's base path (JSON; POSTs carry csrfToken
// as a form field or JSON, like every POST of the handler):
//
//	GET  /accounts           the browser's signed-in accounts: [{"id", "active", "user": {name, email, image}, "expires"}]
//	POST /accounts/add       keeps the active session aside and signs the browser out of it, so that the next sign-in adds an account
//	POST /accounts/switch    makes the session with the id ("id") the active one
//	POST /accounts/sign-out  ends the session with the id; when it was the active one, the newest other becomes active
//
// POST /signout ends every session the browser holds. Ids are public
// session ids (auth.SessionID), never tokens.

// accountActions are the POST actions of /accounts/{action}.
var accountActions = map[string]bool{"add": true, "switch": true, "sign-out": true}

// otherSessionsSeparator joins the tokens of the other-sessions cookie.
const otherSessionsSeparator = "."

// browserAccount is one entry of GET /accounts.
type browserAccount struct {
	ID      string      `json:"id"`
	Active  bool        `json:"active"`
	User    accountUser `json:"user"`
	Expires string      `json:"expires"`
}

// accountUser is the user of a browserAccount, as the session JSON shows
// users.
type accountUser struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Image *string `json:"image"`
}

// multiSessionReady returns why the multi-session routes cannot serve,
// or "".
func (h *Handler) multiSessionReady() string {
	switch {
	case h.multiSession < 2:
		return "several accounts in one browser is off: set handler.Config.MultiSession to how many accounts one browser may hold (2 or more)"
	case h.sessions.Strategy != auth.StrategyDatabase:
		return "several accounts in one browser needs database sessions (auth.Config.Session.Strategy StrategyDatabase)"
	}
	return ""
}

// otherTokens returns the tokens of the other-sessions cookie, at most the
// cap, without repeats and without the active token.
func (h *Handler) otherTokens(r *http.Request, active string) []string {
	v, _ := cookieValue(r, h.names.OtherSessions)
	var out []string
	for t := range strings.SplitSeq(v, otherSessionsSeparator) {
		if t != "" && t != active && !slices.Contains(out, t) && len(out) < h.multiSession-1 {
			out = append(out, t)
		}
	}
	return out
}

// writeOtherTokens sets (or, with none, deletes) the other-sessions cookie.
func (h *Handler) writeOtherTokens(w http.ResponseWriter, tokens []string) {
	if len(tokens) == 0 {
		h.setCookie(w, h.names.OtherSessions, "", -1, true)
		return
	}
	h.setCookie(w, h.names.OtherSessions, strings.Join(tokens, otherSessionsSeparator), h.sessions.MaxAge, true)
}

// heldSession is one of the browser's sessions, read.
type heldSession struct {
	token string
	s     *Session
}

// held reads the browser's sessions: the active one first (when alive),
// then the others that are alive, skipping a second session of a user
// already held (the newer one is kept). stale reports that the
// other-sessions cookie named sessions that are gone or repeated.
func (h *Handler) held(ctx context.Context, r *http.Request) (sessions []heldSession, stale bool, err error) {
	active := h.sessionToken(r)
	others := h.otherTokens(r, active)
	for i, token := range append([]string{active}, others...) {
		if token == "" {
			continue
		}
		s, err := h.databaseSession(ctx, token)
		if err != nil {
			return nil, false, err
		}
		if s == nil || slices.ContainsFunc(sessions, func(x heldSession) bool { return x.s.User.ID == s.User.ID }) {
			stale = stale || i > 0
			continue
		}
		sessions = append(sessions, heldSession{token, s})
	}
	return sessions, stale, nil
}

// serveAccounts answers GET /accounts and POST /accounts/{action}.
func (h *Handler) serveAccounts(w http.ResponseWriter, r *http.Request, action string) {
	body, ok := h.jsonRoute(w, r, h.multiSessionReady(), action, accountActions)
	if !ok {
		return
	}
	ctx := r.Context()
	held, stale, err := h.held(ctx, r)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the sessions could not be read"}, true)
		return
	}
	active := ""
	if len(held) > 0 && held[0].token == h.sessionToken(r) {
		active = held[0].token
		if held[0].s.extended { // the read extended it: the cookie follows
			h.writeSessionCookie(w, core.Session{SessionToken: active, Expires: held[0].s.Expires})
		}
	}
	// tokensOf returns the tokens of hs but the active one: what the
	// other-sessions cookie holds.
	tokensOf := func(hs []heldSession, active string) []string {
		out := make([]string, 0, len(hs))
		for _, x := range hs {
			if x.token != active {
				out = append(out, x.token)
			}
		}
		return out
	}
	find := func(id string) int {
		return slices.IndexFunc(held, func(x heldSession) bool { return auth.SessionID(x.token) == id })
	}
	switch action {
	case "":
		if stale {
			h.writeOtherTokens(w, tokensOf(held, active))
		}
		out := make([]browserAccount, 0, len(held))
		for _, x := range held {
			out = append(out, browserAccount{ID: auth.SessionID(x.token), Active: x.token == active,
				User:    accountUser{Name: x.s.User.Name, Email: x.s.User.Email, Image: x.s.User.Image},
				Expires: string(appendExpires(nil, x.s.Expires.UTC()))})
		}
		writeJSON(w, http.StatusOK, out, true)
	case "add":
		if active == "" {
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: "Unauthorized", Message: "sign in first: adding an account keeps the signed-in one aside"}, true)
			return
		}
		if len(held) >= h.multiSession {
			writeJSON(w, http.StatusConflict, errorBody{Error: "TooManyAccounts", Message: "this browser holds as many accounts as handler.Config.MultiSession allows: sign one out first"}, true)
			return
		}
		h.writeOtherTokens(w, tokensOf(held, ""))
		h.clearSession(w, r)
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true}, true)
	case "switch":
		i := find(body.ID)
		if i < 0 {
			writeJSON(w, http.StatusOK, map[string]bool{"switched": false}, true)
			return
		}
		next := held[i]
		rest := slices.Delete(slices.Clone(held), i, i+1)
		h.writeSessionCookie(w, core.Session{SessionToken: next.token, Expires: next.s.Expires})
		h.writeOtherTokens(w, tokensOf(rest, ""))
		writeJSON(w, http.StatusOK, map[string]bool{"switched": true}, true)
	case "sign-out":
		i := find(body.ID)
		if i < 0 {
			writeJSON(w, http.StatusOK, map[string]bool{"signedOut": false}, true)
			return
		}
		if err := h.auth.Edge().EndSession(ctx, held[i].token, nil); err != nil {
			h.log.ErrorContext(ctx, "authport: signing one account out failed", "error", err)
			writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the session could not be ended"}, true)
			return
		}
		rest := slices.Delete(slices.Clone(held), i, i+1)
		switch {
		case held[i].token != active: // an inactive one: the active stays
			h.writeOtherTokens(w, tokensOf(rest, active))
		case len(rest) == 0:
			h.clearSession(w, r)
			h.writeOtherTokens(w, nil)
		default: // the active one: the newest other takes its place
			h.writeSessionCookie(w, core.Session{SessionToken: rest[0].token, Expires: rest[0].s.Expires})
			h.writeOtherTokens(w, tokensOf(rest[1:], ""))
		}
		writeJSON(w, http.StatusOK, map[string]bool{"signedOut": true}, true)
	}
}

// endOtherSessions ends the sessions of the other-sessions cookie and
// deletes it, for POST /signout with several accounts.
func (h *Handler) endOtherSessions(w http.ResponseWriter, r *http.Request) error {
	if h.multiSession < 2 {
		return nil
	}
	if _, ok := cookieValue(r, h.names.OtherSessions); !ok {
		return nil
	}
	for _, token := range h.otherTokens(r, h.sessionToken(r)) {
		if err := h.auth.Edge().EndSession(r.Context(), token, nil); err != nil {
			return err
		}
	}
	h.writeOtherTokens(w, nil)
	return nil
}
