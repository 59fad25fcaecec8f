package gormadapter

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// baRaw reads Better Auth's tables (the BetterAuth preset's, or with
// snake_case columns BetterAuthDrizzle's) with plain SQL of its own, and
// decodes them as the presets document: emailVerified true is the Unix
// epoch, a name of "" is none, an account's type follows its provider,
// accessTokenExpiresAt is seconds.
type baRaw struct {
	rawView
	col func(string) string
}

func newBARaw(a *Adapter, db *testDB, col func(string) string) *baRaw {
	n := a.names
	return &baRaw{rawView: rawView{db: db.sqlDB, dialect: db.dialect, data: true, names: &n}, col: col}
}

// q quotes the column names given in braces ({emailVerified}) after
// turning them into the schema's (r.col), and the table names as they are.
func (r *baRaw) q(query string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(query, '{')
		if i < 0 {
			b.WriteString(query)
			break
		}
		j := strings.IndexByte(query[i:], '}') + i
		b.WriteString(query[:i])
		name := query[i+1 : j]
		if !strings.HasPrefix(name, "!") {
			name = r.col(name)
		} else {
			name = name[1:]
		}
		if r.dialect == "mysql" {
			b.WriteString("`" + name + "`")
		} else {
			b.WriteString(`"` + name + `"`)
		}
		query = query[j+1:]
	}
	return b.String()
}

func baRows[T any](ctx context.Context, r *baRaw, query string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	out := []T{}
	rows, err := r.db.QueryContext(ctx, r.q(query))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (r *baRaw) Users(ctx context.Context) ([]core.User, error) {
	users, err := r.rawView.usersWith(ctx, r.q(`SELECT {id}, {email}, {emailVerified}, {name}, {image}, NULL`), func(verified any) (*time.Time, error) {
		var b sql.NullBool
		if err := b.Scan(verified); err != nil {
			return nil, err
		}
		if b.Bool {
			return new(time.Unix(0, 0).UTC()), nil
		}
		return nil, nil
	})
	for i := range users {
		if users[i].Name != nil && *users[i].Name == "" {
			users[i].Name = nil
		}
	}
	return users, err
}

func (r *baRaw) Accounts(ctx context.Context) ([]core.Account, error) {
	return baRows(ctx, r, `SELECT {userId}, {providerId}, {accountId}, {accessToken}, {accessTokenExpiresAt}, {idToken},
		{refreshToken}, {scope}, {password} FROM {!account}`, func(rows *sql.Rows) (core.Account, error) {
		var a core.Account
		var exp rawTime
		err := rows.Scan(&a.UserID, &a.Provider, &a.ProviderAccountID, &a.AccessToken, &exp, &a.IDToken, &a.RefreshToken, &a.Scope, &a.PasswordHash)
		a.Type = core.AccountTypeOAuth
		if a.Provider == core.PasswordProvider {
			a.Type = core.AccountTypeCredentials
		}
		if exp.valid {
			a.ExpiresAt = new(exp.t.Unix())
		}
		return a, err
	})
}

func (r *baRaw) Sessions(ctx context.Context) ([]core.Session, error) {
	return baRows(ctx, r, `SELECT {token}, {userId}, {expiresAt}, {createdAt}, {updatedAt}, {ipAddress}, {userAgent} FROM {!session}`,
		func(rows *sql.Rows) (core.Session, error) {
			var s core.Session
			var exp, created, updated rawTime
			var ip, ua sql.NullString
			err := rows.Scan(&s.SessionToken, &s.UserID, &exp, &created, &updated, &ip, &ua)
			s.Expires, s.CreatedAt, s.UpdatedAt, s.IPAddress, s.UserAgent = exp.t, created.t, updated.t, ip.String, ua.String
			return s, err
		})
}

func (r *baRaw) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	return baRows(ctx, r, `SELECT {identifier}, {value}, {expiresAt} FROM {!verification}`, func(rows *sql.Rows) (core.VerificationToken, error) {
		var v core.VerificationToken
		var exp rawTime
		err := rows.Scan(&v.Identifier, &v.Token, &exp)
		v.Expires = exp.t
		return v, err
	})
}

func (r *baRaw) Authenticators(context.Context) ([]core.Authenticator, error) {
	return []core.Authenticator{}, nil
}

// baFixture is the conformance fixture of a Better Auth preset: the
// application columns added to its user table, the raw view baRaw.
func baFixture(t testing.TB, a *Adapter, db *testDB, col func(string) string, opts ...Option) conformance.Fixture {
	f := fixture(t, a, db, opts...)
	f.Raw = newBARaw(a, db, col)
	return f
}
