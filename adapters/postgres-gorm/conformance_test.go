package gormadapter

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// The module's time is mostly its dozen full runs of the suite, each rule
// waiting on a database of its own: every TestConformance* test and every
// backend's suite in it runs in parallel with the others (t.Parallel), as
// many at once as go test's -parallel allows (the test command raises it
// for this module: tools/ci/schedule.go).

func TestConformance(t *testing.T) {
	t.Parallel()
	// postgres-ha: a pg_auto_failover primary and synchronous standby,
	// through the multi-host URL (AUTHPORT_POSTGRES_HA_URL).
	for _, backend := range append(backends[:len(backends):len(backends)], "postgres-ha") {
		conformance.Run(t, conformance.Harness{
			Name:     backend,
			Parallel: true, // postgres, mysql and sqlite at once: each test has a database of its own
			New: func(t testing.TB) conformance.Fixture {
				a, db := newAdapter(t, backend, false)
				return fixture(t, a, db)
			},
		})
	}
}

// fixture is the conformance fixture of a migrated adapter on db: the
// users table gets a column for each of conformance.UserDataFields (as an
// application's migration would add them), and the raw view reads and
// writes them. opts are a's options, for the second instance.
func fixture(t testing.TB, a *Adapter, db *testDB, opts ...Option) conformance.Fixture {
	t.Helper()
	ctx := context.Background()
	for _, f := range conformance.UserDataFields() {
		ddl := fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", a.d.table(a.names.Users), a.d.ident(f.Name), f.SQLType)
		if _, err := db.sqlDB.ExecContext(ctx, ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	if _, err := a.refreshUserColumns(ctx); err != nil {
		t.Fatal(err)
	}
	raw := &rawView{db: db.sqlDB, dialect: db.dialect, data: true}
	if a.names != DefaultNames() {
		raw.names = &a.names
	}
	return conformance.Fixture{Adapter: a, Raw: raw, Peer: peerOn(db, opts...)}
}

// runVariant runs the suite on each backend with the adapter made (and
// its tables migrated) with opt, as <backend>_<name>.
func runVariant(t *testing.T, name string, backends []string, opt Option) {
	for _, backend := range backends {
		conformance.Run(t, conformance.Harness{
			Name:     backend + "_" + name,
			Parallel: true, // each test has a database of its own
			New: func(t testing.TB) conformance.Fixture {
				a, db := newAdapter(t, backend, false, opt)
				return fixture(t, a, db, opt)
			},
		})
	}
}

// TestConformancePresets runs the suite's userData, session inventory
// (listSessionsByUserId, deleteSessionsByUserId, sessionMetadata),
// optionalEmail, usernames, passwordHashes and factors rules on the tables
// each Auth.js preset names, as Migrate creates them under the preset (no
// session metadata, username or password hash columns and no factors
// table: the metadata rules check that none is kept, the username and hash
// rules that the layer refuses them, the factors rules skip), with the
// application columns added. (The other rules store
// expires_in and authorization_details, which the presets omit; the
// presets' own tests cover them.)
func TestConformancePresets(t *testing.T) {
	t.Parallel()
	groups := []string{"userData", "listSessionsByUserId", "deleteSessionsByUserId", "sessionMetadata",
		"optionalEmail", "usernames", "passwordHashes", "factors"}
	for _, p := range []struct {
		name     string
		opt      Option
		backends []string
		groups   []string
	}{
		{"drizzle", AuthJSDrizzle(), backends, groups},
		{"kysely", AuthJSKysely(), backends, groups},
		{"prisma", AuthJSPrisma(), []string{"postgres"}, groups},
		// A preset with the username column named (Migrate adds it): the
		// usernames rules then run whole on the preset's tables. (The
		// passwordHashes rules compare whole accounts with expires_in and
		// authorization_details, which the presets omit; the hash on a
		// preset's table is TestPresetsKeepNoUsernamesOrHashes's.)
		{"kysely_usernames", preset(AuthJSKysely(), WithUsernameColumn("username")), backends, []string{"optionalEmail", "usernames"}},
		// A preset with a factors table named (Migrate creates it beside
		// Auth.js's tables): the factors rules run whole; without it they
		// skip, naming the omitted methods.
		{"drizzle_factors", preset(AuthJSDrizzle(), WithFactorsTable("factor")), backends, []string{"factors", "deleteUserRace"}},
	} {
		for _, backend := range p.backends {
			conformance.Run(t, conformance.Harness{
				Name:     p.name + "_" + backend,
				Parallel: true,
				Groups:   p.groups,
				New: func(t testing.TB) conformance.Fixture {
					a, db := newAdapter(t, backend, false, p.opt)
					return fixture(t, a, db, p.opt)
				},
			})
		}
	}
	// Better Auth's tables, as Migrate creates them under each preset,
	// read back by baRaw. The method rules compare whole records, and
	// fail on what Better Auth's tables cannot hold (an emailVerified
	// time, an account's type, expires_in, token_type, session_state and
	// authorization_details, a session without createdAt and updatedAt:
	// they are NOT NULL); so the rows run the flows, which store and read
	// every record kind through the checked layer (sign-in by e-mail,
	// OAuth, password and passkey, sessions, token families), and the
	// groups whose rules Better Auth's tables change, each rule that
	// cannot hold skipped with its reason. TestBetterAuthTables checks
	// the mapping field by field.
	baGroups := []string{"accounts", "emailSignIn", "oauthSignIn", "passwordFlow", "sessionLifetime",
		"sessionInventory", "sessionMetadata", "useVerificationToken", "createVerificationToken", "optionalEmail", "webAuthn", "deleteUserRace"}
	// The flows need every method of the contract, the authenticator
	// methods included: Better Auth's passkey table is not mapped (see
	// BetterAuth), so the rows add authport's authenticators table
	// beside Better Auth's four, as an app using authport's passkeys would.
	withAuthenticatorsTable := func(c *config) { c.names.Authenticators = "authenticator" }
	baSkip := map[string]string{
		"optionalEmail": "Better Auth's user.email is NOT NULL: the BetterAuth presets refuse a user without an e-mail address (core.ErrInvalidInput), as Better Auth does",
		"createVerificationToken/duplicate_rejected":           "Better Auth's verification table has no unique key on (identifier, value), so a second row of the same pair is not refused",
		"emailSignIn/new_user_created_verified":                "Better Auth's user.emailVerified is a boolean: the time of verification reads back as the Unix epoch",
		"emailSignIn/email_verified_set_on_first_sign_in_only": "Better Auth's user.emailVerified is a boolean: the time of the first verification reads back as the Unix epoch",
		"oauthSignIn/new_user_and_account":                     "Better Auth's account table has no token_type column (the rule wants \"bearer\" kept)",
		"oauthSignIn/new_account_linked_to_signed_in_user":     "Better Auth's account table has no type column: an OIDC account reads back as oauth",
		"webAuthn/register_then_authenticate":                  "Better Auth's account table has no type column: the webauthn account authport links per passkey reads back as oauth",
		"webAuthn/second_authenticator_reuses_the_account":     "Better Auth's account table has no type column: the webauthn account authport links per passkey reads back as oauth",
		"passwordFlow/oauth_user_without_email":                "Better Auth's user.email is NOT NULL: a user without an e-mail address is refused",
	}
	for _, p := range []struct {
		name     string
		opt      Option
		col      func(string) string
		backends []string
		groups   []string
	}{
		{"betterauth", preset(BetterAuth(), withAuthenticatorsTable), func(s string) string { return s }, backends, baGroups},
		{"betterauth_drizzle", preset(BetterAuthDrizzle(), withAuthenticatorsTable), snakeCase, backends, []string{"emailSignIn", "oauthSignIn", "passwordFlow"}},
	} {
		for _, backend := range p.backends {
			conformance.Run(t, conformance.Harness{
				Name:     p.name + "_" + backend,
				Parallel: true,
				Groups:   p.groups,
				Skip:     baSkip,
				New: func(t testing.TB) conformance.Fixture {
					a, db := newAdapter(t, backend, false, p.opt)
					return baFixture(t, a, db, p.col, p.opt)
				},
			})
		}
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
	// data: the users table has the columns of conformance.UserDataFields.
	data bool
	// names, when set, are a preset's: the statements below, written with
	// the default names, are renamed to them, omitted columns read NULL.
	names *Names
}

func (r *rawView) quote(cols string) string {
	if n := r.names; n != nil {
		d := DefaultNames()
		for _, p := range [][2]string{{d.Users, n.Users}, {d.Accounts, n.Accounts}, {d.Sessions, n.Sessions},
			{d.VerificationTokens, n.VerificationTokens}, {d.Authenticators, n.Authenticators},
			{d.Account.ExpiresIn, n.Account.ExpiresIn}, {d.Account.AuthorizationDetails, n.Account.AuthorizationDetails},
			{d.Session.CreatedAt, n.Session.CreatedAt}, {d.Session.UpdatedAt, n.Session.UpdatedAt},
			{d.Session.IPAddress, n.Session.IPAddress}, {d.Session.UserAgent, n.Session.UserAgent},
			{d.User.Username, n.User.Username}, {d.Account.Password, n.Account.Password}, {d.Factors, n.Factors}} {
			to := `"` + p[1] + `"`
			if p[1] == Omit {
				to = "NULL"
			}
			cols = strings.ReplaceAll(cols, `"`+p[0]+`"`, to)
		}
	}
	if r.dialect == "mysql" {
		return strings.ReplaceAll(cols, `"`, "`")
	}
	return cols
}

// rawRows runs query (see quote) on r's database and returns its rows,
// each made a T by scan; an empty slice when there are none.
func rawRows[T any](ctx context.Context, r *rawView, query string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	out := []T{}
	rows, err := r.db.QueryContext(ctx, r.quote(query))
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
	return r.usersWith(ctx, `SELECT "id", "email", "emailVerified", "name", "image", "username"`, nil)
}

// usersWith reads the users with the SELECT of the six standard columns
// sel (see quote), emailVerified decoded by verified (nil: a time).
func (r *rawView) usersWith(ctx context.Context, query string, verified func(any) (*time.Time, error)) ([]core.User, error) {
	if r.data {
		query += `, "role", "tenantId", "level", "beta"`
	}
	return rawRows(ctx, r, query+` FROM "users"`, func(rows *sql.Rows) (core.User, error) {
		var u core.User
		var ev rawTime
		var evAny any
		var email, username sql.NullString // NULL for none
		var role, tenant *string
		var level *int64
		var beta *bool
		dest := []any{&u.ID, &email, &ev, &u.Name, &u.Image, &username}
		if verified != nil {
			dest[2] = &evAny
		}
		if r.data {
			dest = append(dest, &role, &tenant, &level, &beta)
		}
		if err := rows.Scan(dest...); err != nil {
			return u, err
		}
		u.Email, u.Username, u.EmailVerified = email.String, username.String, ev.ptr()
		if verified != nil {
			var err error
			if u.EmailVerified, err = verified(evAny); err != nil {
				return u, err
			}
		}
		for name, v := range map[string]any{"role": role, "tenantId": tenant, "level": level, "beta": beta} {
			if reflect.ValueOf(v).IsNil() {
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return u, err
			}
			if u.Data == nil {
				u.Data = map[string]json.RawMessage{}
			}
			u.Data[name] = b
		}
		return u, nil
	})
}

var _ conformance.UserDataWriter = (*rawView)(nil)

// WriteUserData sets application columns of a user with plain SQL, as
// another application sharing the table would.
func (r *rawView) WriteUserData(ctx context.Context, userID string, data map[string]json.RawMessage) error {
	var sets []string
	var args []any
	for name, raw := range data {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = int64(f)
		}
		ph := "?"
		if r.dialect == "postgres" {
			ph = fmt.Sprintf("$%d", len(args)+1)
		}
		sets, args = append(sets, `"`+name+`" = `+ph), append(args, v)
	}
	ph := "?"
	if r.dialect == "postgres" {
		ph = fmt.Sprintf("$%d", len(args)+1)
	}
	_, err := r.db.ExecContext(ctx, r.quote(`UPDATE "users" SET `+strings.Join(sets, ", ")+` WHERE "id" = `+ph), append(args, userID)...)
	return err
}

func (r *rawView) Accounts(ctx context.Context) ([]core.Account, error) {
	return rawRows(ctx, r, `SELECT "userId", "type", "provider", "providerAccountId", "access_token", "authorization_details",
		"expires_at", "expires_in", "id_token", "refresh_token", "scope", "token_type", "session_state", "password" FROM "accounts"`,
		func(rows *sql.Rows) (core.Account, error) {
			var a core.Account
			var details *string
			if err := rows.Scan(&a.UserID, &a.Type, &a.Provider, &a.ProviderAccountID, &a.AccessToken, &details,
				&a.ExpiresAt, &a.ExpiresIn, &a.IDToken, &a.RefreshToken, &a.Scope, &a.TokenType, &a.SessionState, &a.PasswordHash); err != nil {
				return a, err
			}
			if details != nil {
				if err := json.Unmarshal([]byte(*details), &a.AuthorizationDetails); err != nil {
					return a, err
				}
				if a.AuthorizationDetails == nil {
					a.AuthorizationDetails = []core.AuthorizationDetail{}
				}
			}
			return a, nil
		})
}

// rawExpiring reads rows of two strings and an expiry (sessions,
// verification tokens), each made a T by mk.
func rawExpiring[T any](ctx context.Context, r *rawView, query string, mk func(first, second string, expires time.Time) T) ([]T, error) {
	return rawRows(ctx, r, query, func(rows *sql.Rows) (T, error) {
		var first, second string
		var exp rawTime
		err := rows.Scan(&first, &second, &exp)
		return mk(first, second, exp.t), err
	})
}

// Sessions reads the sessions with their metadata columns (NULL where a
// preset omits them, see quote): NULL reads as the zero value.
func (r *rawView) Sessions(ctx context.Context) ([]core.Session, error) {
	return rawRows(ctx, r, `SELECT "sessionToken", "userId", "expires", "createdAt", "updatedAt", "ipAddress", "userAgent" FROM "sessions"`,
		func(rows *sql.Rows) (core.Session, error) {
			var s core.Session
			var exp, created, updated rawTime
			var ip, ua sql.NullString
			err := rows.Scan(&s.SessionToken, &s.UserID, &exp, &created, &updated, &ip, &ua)
			s.Expires, s.CreatedAt, s.UpdatedAt, s.IPAddress, s.UserAgent = exp.t, created.t, updated.t, ip.String, ua.String
			return s, err
		})
}

func (r *rawView) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	return rawExpiring(ctx, r, `SELECT "identifier", "token", "expires" FROM "verification_token"`,
		func(identifier, token string, expires time.Time) core.VerificationToken {
			return core.VerificationToken{Identifier: identifier, Token: token, Expires: expires}
		})
}

func (r *rawView) Authenticators(ctx context.Context) ([]core.Authenticator, error) {
	if r.names != nil && r.names.Authenticators == Omit {
		return []core.Authenticator{}, nil
	}
	return rawRows(ctx, r, `SELECT "credentialID", "credentialPublicKey", "counter", "credentialBackedUp",
		"credentialDeviceType", "providerAccountId", "userId", "transports" FROM "authenticators"`,
		func(rows *sql.Rows) (core.Authenticator, error) {
			var a core.Authenticator
			err := rows.Scan(&a.CredentialID, &a.CredentialPublicKey, &a.Counter, &a.CredentialBackedUp,
				&a.CredentialDeviceType, &a.ProviderAccountID, &a.UserID, &a.Transports)
			return a, err
		})
}

var _ conformance.FactorRaw = (*rawView)(nil)

// Factors reads the factors table with plain SQL (none when it is
// omitted): the secret as stored, bytes, zero bytes read as nil.
func (r *rawView) Factors(ctx context.Context) ([]core.Factor, error) {
	if r.names != nil && r.names.Factors == Omit {
		return []core.Factor{}, nil
	}
	// Only the table is renamed: a preset's names for the sessions
	// table's createdAt (Omit) are not the factors table's.
	v := &rawView{db: r.db, dialect: r.dialect}
	if r.names != nil {
		n := DefaultNames()
		n.Factors = r.names.Factors
		v.names = &n
	}
	return rawRows(ctx, v, `SELECT "id", "userId", "type", "name", "secret", "step", "createdAt", "lastUsedAt" FROM "factors"`,
		func(rows *sql.Rows) (core.Factor, error) {
			var f core.Factor
			var created, used rawTime
			err := rows.Scan(&f.ID, &f.UserID, &f.Type, &f.Name, &f.Secret, &f.Step, &created, &used)
			if len(f.Secret) == 0 {
				f.Secret = nil
			}
			f.CreatedAt, f.LastUsedAt = created.t, used.t
			return f, err
		})
}
