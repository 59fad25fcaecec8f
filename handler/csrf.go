package handler

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// csrfHash is Auth.js's hash of a CSRF token: hex SHA-256 of token+secret.
func csrfHash(token, secret string) string {
	sum := sha256.Sum256([]byte(token + secret))
	return hex.EncodeToString(sum[:])
}

// csrfFromCookie returns the token of a valid CSRF cookie ("token|hash",
// the hash made with one of the secrets), or "".
func (h *Handler) csrfFromCookie(r *http.Request) string {
	c, err := r.Cookie(h.names.CSRFToken)
	if err != nil {
		return ""
	}
	value := c.Value
	if strings.Contains(value, "%7C") || strings.Contains(value, "%7c") {
		// Auth.js's cookie serializer percent-encodes the "|".
		value = strings.ReplaceAll(strings.ReplaceAll(value, "%7C", "|"), "%7c", "|")
	}
	token, hash, ok := strings.Cut(value, "|")
	if !ok || token == "" || len(hash) != sha256.Size*2 {
		return ""
	}
	valid := 0
	for _, s := range h.secrets {
		valid |= subtle.ConstantTimeCompare([]byte(csrfHash(token, s)), []byte(hash))
	}
	if valid != 1 {
		return ""
	}
	return token
}

// csrf returns the request's CSRF token, setting a new CSRF cookie when the
// request has no valid one (as Auth.js does on every request), and whether
// the request is a POST whose submitted token (form or JSON field
// csrfToken) matches its cookie. The form must have been parsed.
func (h *Handler) csrf(w http.ResponseWriter, r *http.Request, submitted string) (token string, verified bool) {
	token = h.csrfFromCookie(r)
	if token != "" {
		verified = r.Method == http.MethodPost && submitted != "" &&
			subtle.ConstantTimeCompare([]byte(submitted), []byte(token)) == 1
		return token, verified
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	token = hex.EncodeToString(b)
	h.setCookie(w, h.names.CSRFToken, token+"|"+csrfHash(token, h.secrets[0]), 0, false)
	return token, false
}
