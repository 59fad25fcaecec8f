package handler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/jwt"
)

// BenchmarkReaderSession measures reading the session of a request: a JWT
// cookie (decrypt) and a database cookie (memory adapter lookup).
func BenchmarkReaderSession(b *testing.B) {
	codec, _ := jwt.NewCodec(secret)
	token, _ := codec.Encode("authjs.session-token", map[string]any{"sub": "u", "email": "a@example.com", "name": "A"}, time.Hour)
	rdJWT, _ := handler.NewReader(handler.ReaderConfig{Secrets: []string{secret}})
	store := memory.New()
	a, _ := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}})
	store.CreateUser(context.Background(), core.User{ID: "u", Email: "a@example.com"})
	sess, _ := a.CreateSession(context.Background(), "u")
	rdDB, _ := handler.NewReader(handler.ReaderConfig{Auth: a})
	for _, bc := range []struct {
		name string
		rd   *handler.Reader
		c    *http.Cookie
	}{
		{"jwt", rdJWT, &http.Cookie{Name: "authjs.session-token", Value: token}},
		{"database", rdDB, &http.Cookie{Name: "authjs.session-token", Value: sess.SessionToken}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/", nil)
			r.AddCookie(bc.c)
			for b.Loop() {
				if s, err := bc.rd.Session(r); err != nil || s == nil {
					b.Fatal(s, err)
				}
			}
		})
	}
}
