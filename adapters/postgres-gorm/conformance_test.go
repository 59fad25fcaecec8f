package gormadapter

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

func TestConformance(t *testing.T) {
	// postgres-ha: a pg_auto_failover primary and synchronous standby,
	// through the multi-host URL (AUTHPORT_POSTGRES_HA_URL).
	for _, backend := range append(backends[:len(backends):len(backends)], "postgres-ha") {
		conformance.Run(t, conformance.Harness{
			Name:     backend,
			Parallel: true, // postgres, mysql and sqlite at once: each test has a database of its own
			New: func(t testing.TB) conformance.Fixture {
				a, db := newAdapter(t, backend, false)
				return conformance.Fixture{Adapter: a, Raw: &rawView{db: db.sqlDB, dialect: db.dialect}, Peer: peerOn(db)}
			},
		})
	}
}

// peerOn gives the conformance suite a second adapter on db, made with the
// same options as the first (the two-instance rules).
func peerOn(db *testDB, opts ...Option) func(t testing.TB) any {
	return func(t testing.TB) any {
		b, err := New(context.Background(), db.gdb, opts...)
		if err != nil {
			t.Fatalf("second New on the same database: %v", err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
}

// rawView reads the default-named tables with plain SQL of its own, not
// through the adapter's statements or scanners.
type rawView struct {
	db      *sql.DB
	dialect string
}

func (r *rawView) quote(cols string) string {
	if r.dialect == "mysql" {
		return strings.ReplaceAll(cols, `"`, "`")
	}
	return cols
}

func (r *rawView) rows(ctx context.Context, query string, scan func(*sql.Rows) error) error {
	rows, err := r.db.QueryContext(ctx, r.quote(query))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

var _ conformance.RawWriter = (*rawView)(nil)

// WriteAccount inserts the account exactly as given (not normalized), with
// plain SQL, as another application sharing the tables would.
func (r *rawView) WriteAccount(ctx context.Context, a core.Account) error {
	var details *string
	if a.AuthorizationDetails != nil {
		b, err := json.Marshal(a.AuthorizationDetails)
		if err != nil {
			return err
		}
		details = new(string(b))
	}
	ph := make([]string, 13)
	for i := range ph {
		ph[i] = "?"
		if r.dialect == "postgres" {
			ph[i] = fmt.Sprintf("$%d", i+1)
		}
	}
	_, err := r.db.ExecContext(ctx, r.quote(`INSERT INTO "accounts" ("userId", "type", "provider", "providerAccountId", "access_token",
		"authorization_details", "expires_at", "expires_in", "id_token", "refresh_token", "scope", "token_type", "session_state")
		VALUES (`+strings.Join(ph, ", ")+`)`),
		a.UserID, string(a.Type), a.Provider, a.ProviderAccountID, a.AccessToken, details,
		a.ExpiresAt, a.ExpiresIn, a.IDToken, a.RefreshToken, a.Scope, a.TokenType, a.SessionState)
	return err
}

// rawTime reads a stored time: time.Time from pgx and from MySQL with
// parseTime; SQLite stores "YYYY-MM-DD HH:MM:SS.mmm" text, which go-sqlite3
// hands over as time.Time for DATETIME columns.
type rawTime struct {
	t     time.Time
	valid bool
}

func (rt *rawTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		return nil
	case time.Time:
		rt.t, rt.valid = v, true
		return nil
	case int64: // SQLite, WithSQLiteTimes(SQLiteTimeUnixMilli)
		rt.t, rt.valid = time.UnixMilli(v).UTC(), true
		return nil
	case string:
		layout := "2006-01-02 15:04:05.000"
		if strings.HasSuffix(v, "Z") { // SQLite, WithSQLiteTimes(SQLiteTimeISO8601)
			layout = "2006-01-02T15:04:05.000Z"
		}
		t, err := time.ParseInLocation(layout, v, time.UTC)
		rt.t, rt.valid = t, err == nil
		return err
	}
	return fmt.Errorf("raw time: unexpected %T", src)
}

func (rt rawTime) ptr() *time.Time {
	if !rt.valid {
		return nil
	}
	return &rt.t
}

func (r *rawView) Users(ctx context.Context) ([]core.User, error) {
	out := []core.User{}
	err := r.rows(ctx, `SELECT "id", "email", "emailVerified", "name", "image" FROM "users"`, func(rows *sql.Rows) error {
		var u core.User
		var ev rawTime
		if err := rows.Scan(&u.ID, &u.Email, &ev, &u.Name, &u.Image); err != nil {
			return err
		}
		u.EmailVerified = ev.ptr()
		out = append(out, u)
		return nil
	})
	return out, err
}

func (r *rawView) Accounts(ctx context.Context) ([]core.Account, error) {
	out := []core.Account{}
	err := r.rows(ctx, `SELECT "userId", "type", "provider", "providerAccountId", "access_token", "authorization_details",
		"expires_at", "expires_in", "id_token", "refresh_token", "scope", "token_type", "session_state" FROM "accounts"`,
		func(rows *sql.Rows) error {
			var a core.Account
			var details *string
			if err := rows.Scan(&a.UserID, &a.Type, &a.Provider, &a.ProviderAccountID, &a.AccessToken, &details,
				&a.ExpiresAt, &a.ExpiresIn, &a.IDToken, &a.RefreshToken, &a.Scope, &a.TokenType, &a.SessionState); err != nil {
				return err
			}
			if details != nil {
				if err := json.Unmarshal([]byte(*details), &a.AuthorizationDetails); err != nil {
					return err
				}
				if a.AuthorizationDetails == nil {
					a.AuthorizationDetails = []core.AuthorizationDetail{}
				}
			}
			out = append(out, a)
			return nil
		})
	return out, err
}

func (r *rawView) Sessions(ctx context.Context) ([]core.Session, error) {
	out := []core.Session{}
	err := r.rows(ctx, `SELECT "sessionToken", "userId", "expires" FROM "sessions"`, func(rows *sql.Rows) error {
		var s core.Session
		var exp rawTime
		if err := rows.Scan(&s.SessionToken, &s.UserID, &exp); err != nil {
			return err
		}
		s.Expires = exp.t
		out = append(out, s)
		return nil
	})
	return out, err
}

func (r *rawView) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	out := []core.VerificationToken{}
	err := r.rows(ctx, `SELECT "identifier", "token", "expires" FROM "verification_token"`, func(rows *sql.Rows) error {
		var v core.VerificationToken
		var exp rawTime
		if err := rows.Scan(&v.Identifier, &v.Token, &exp); err != nil {
			return err
		}
		v.Expires = exp.t
		out = append(out, v)
		return nil
	})
	return out, err
}

func (r *rawView) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	out := []core.Authenticator{}
	err := r.rows(ctx, `SELECT "credentialID", "credentialPublicKey", "counter", "credentialBackedUp",
		"credentialDeviceType", "providerAccountId", "userId", "transports" FROM "authenticators"`, func(rows *sql.Rows) error {
		var a core.Authenticator
		if err := rows.Scan(&a.CredentialID, &a.CredentialPublicKey, &a.Counter, &a.CredentialBackedUp,
			&a.CredentialDeviceType, &a.ProviderAccountID, &a.UserID, &a.Transports); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	return out, err
}
