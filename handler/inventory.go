package handler

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// The session inventory's routes, under the handler's base path: a user's
// view of where they are signed in ([auth.Sessions]). They answer JSON and
// need database sessions and an adapter that lists and deletes a user's
// sessions; otherwise they answer 404 saying so.
//
//	GET  /sessions                the signed-in user's sessions ([auth.SessionInfo]), the current one marked
//	POST /sessions/revoke         ends one of them: {"csrfToken", "id"} → {"revoked": true|false}
//	POST /sessions/revoke-others  ends all but the current one → {"revoked": n}
//	POST /sessions/revoke-all     ends all of them, this one included ("sign out everywhere") → {"revoked": n}
//
// POST bodies are JSON or a form, with the CSRF token (GET /csrf) as
// csrfToken, like every POST of the handler. Without a session they answer
// 401.

// inventoryActions are the POST actions of /sessions/{action}.
var inventoryActions = map[string]bool{"revoke": true, "revoke-others": true, "revoke-all": true}

// inventoryBody is a POST's body: the CSRF token, and the session id of
// /sessions/revoke.
type inventoryBody struct {
	CSRFToken string `json:"csrfToken"`
	ID        string `json:"id"`
}

// inventoryReady returns why the inventory's routes cannot serve, or "".
func (h *Handler) inventoryReady() string {
	if h.sessions.Strategy != auth.StrategyDatabase {
		return "listing and ending sessions needs database sessions (auth.Config.Session.Strategy StrategyDatabase): JWT sessions are not stored"
	}
	caps := h.auth.Capabilities()
	if !caps.HasExtension(core.ExtensionListSessionsByUserID) || !caps.HasExtension(core.ExtensionDeleteSessionsByUserID) {
		return "listing and ending sessions needs an adapter with listSessionsByUserId and deleteSessionsByUserId; " + caps.Adapter() + " has not both"
	}
	return ""
}

// serveSessions answers GET /sessions and POST /sessions/{action} (the
// route table allows only those methods).
func (h *Handler) serveSessions(w http.ResponseWriter, r *http.Request, action string) {
	body, ok := h.jsonRoute(w, r, h.inventoryReady(), action, inventoryActions)
	if !ok {
		return
	}
	ctx := r.Context()
	s, _, err := h.session(ctx, r)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the session could not be read"}, true)
		return
	}
	if s == nil {
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: "Unauthorized", Message: "sign in to see your sessions"}, true)
		return
	}
	if s.extended {
		h.writeSessionCookie(w, core.Session{SessionToken: s.token, Expires: s.Expires})
	}
	inv := h.auth.Sessions()
	var result any
	switch action {
	case "":
		result, err = inv.List(ctx, s.User.ID, s.token)
	case "revoke":
		var ok bool
		ok, err = inv.Revoke(ctx, s.User.ID, body.ID)
		if ok && body.ID == auth.SessionID(s.token) {
			h.clearSession(w, r)
		}
		result = map[string]bool{"revoked": ok}
	case "revoke-others":
		var n int
		n, err = inv.RevokeOthers(ctx, s.User.ID, s.token)
		result = map[string]int{"revoked": n}
	case "revoke-all":
		var n int
		n, err = inv.RevokeAll(ctx, s.User.ID)
		if err == nil {
			h.clearSession(w, r)
		}
		result = map[string]int{"revoked": n}
	}
	if err != nil {
		h.log.ErrorContext(ctx, "authport: session inventory failed", "action", cmp.Or(action, "list"), "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "SessionError", Message: "the sessions could not be read or ended"}, true)
		return
	}
	writeJSON(w, http.StatusOK, result, true)
}

// jsonRoute opens a request to one of the JSON routes with actions
// (/sessions/{action}, /accounts/{action}): it answers 404 itself when the
// routes cannot serve (why, not "") or the action is unknown, and reads and
// CSRF-checks a POST's body (postBody). ok false: answered.
func (h *Handler) jsonRoute(w http.ResponseWriter, r *http.Request, why, action string, actions map[string]bool) (body inventoryBody, ok bool) {
	switch {
	case why != "":
		writeJSON(w, http.StatusNotFound, errorBody{Error: "UnknownAction", Message: why}, true)
		return body, false
	case action != "" && !actions[action]:
		h.notFound(w, r)
		return body, false
	}
	return body, r.Method != http.MethodPost || h.postBody(w, r, &body)
}

// postBody reads a JSON API POST's body (readBody) and checks its CSRF
// token, answering the refusal itself (403 MissingCSRF).
func (h *Handler) postBody(w http.ResponseWriter, r *http.Request, v *inventoryBody) bool {
	if !h.readBody(w, r, v) {
		return false
	}
	if _, ok := h.csrf(w, r, v.CSRFToken); !ok {
		h.log.InfoContext(r.Context(), "authport: request refused", "path", r.URL.Path, "error_code", ErrorMissingCSRF)
		writeJSON(w, http.StatusForbidden, errorBody{Error: ErrorMissingCSRF, Message: "the CSRF token is missing or does not match its cookie"}, true)
		return false
	}
	return true
}

// isJSON reports whether a request's body is JSON (Content-Type
// application/json).
func isJSON(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
}

// decodeJSONBody decodes a request's JSON body into v, answering 413 (too
// large) or 400 (not what, as the message says) itself when it cannot.
func decodeJSONBody(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: "BadRequest", Message: "the request body is too large"}, true)
		return false
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "BadRequest", Message: "the request body is not " + what}, true)
		return false
	}
	return true
}

// readBody reads a POST's JSON object (Content-Type application/json) or
// form into v's fields by their JSON names (string fields only), answering
// 400 itself when it cannot.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, v *inventoryBody) bool {
	if isJSON(r) {
		return decodeJSONBody(w, r, v, "a JSON object with string fields csrfToken and id")
	}
	if !h.form(w, r) {
		return false
	}
	v.CSRFToken, v.ID = r.PostFormValue("csrfToken"), r.PostFormValue("id")
	return true
}
