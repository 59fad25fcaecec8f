package gormadapter

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Omit, given as the name of an optional account column, tells the adapter
// that the table has no such column: the field is not written and always
// reads back as nil. Only the nullable token columns of [AccountColumns]
// (the password hash column among them), [UserColumns.Username] and the
// session metadata columns of [SessionColumns] may be omitted. It lets the adapter use an existing schema that lacks them,
// such as the one Auth.js's pg adapter creates (no expires_in, no
// authorization_details).
//
// Given as [Names.Authenticators], it tells the adapter there is no
// authenticators table (Auth.js's pg schema has none): the authenticator
// methods then fail with an error matching
// [github.com/authport/authport/core.ErrMissingAdapterMethod] and
// errors.ErrUnsupported, deleteUser has no authenticators to delete, and
// [Adapter.Migrate] creates no such table. Given as [Names.Factors], the
// same for the factors table (the Auth.js presets: see
// [WithFactorsTable]).
const Omit = "-"

// Names are the table and column names the adapter reads and writes. The
// zero value of any field means "the default" (see [DefaultNames]), so a
// caller sets only what differs. A table name may be qualified with a schema
// ("auth.users"); names are quoted, so they are used exactly as given.
type Names struct {
	Users              string // default "users"
	Accounts           string // default "accounts"
	Sessions           string // default "sessions"
	VerificationTokens string // default "verification_token"
	Authenticators     string // default "authenticators"; Omit: there is none
	Factors            string // default "factors"; Omit: there is none

	User              UserColumns
	Account           AccountColumns
	Session           SessionColumns
	VerificationToken VerificationTokenColumns
	Authenticator     AuthenticatorColumns
	Factor            FactorColumns
}

// UserColumns are the column names of the users table.
type UserColumns struct {
	ID            string // default "id"
	Email         string // default "email"
	EmailVerified string // default "emailVerified"
	Name          string // default "name"
	Image         string // default "image"
	// Username is the nullable, unique column of the users' usernames
	// (default "username"). [Omit]: the table keeps none (the Auth.js
	// presets), and the adapter reports getUserByUsername omitted
	// ([Adapter.OmittedMethods]); see [WithUsernameColumn].
	Username string
}

// numUserColumns is how many of [UserColumns] every users table has; the
// username column follows them.
const numUserColumns = 5

// AccountColumns are the column names of the accounts table. Type, the
// token columns (AccessToken to SessionState) and Password may be set to
// [Omit]. Without a type column (Better Auth's account table has none) the
// type is derived on read: [github.com/authport/authport/core.AccountTypeCredentials]
// for the password provider
// ([github.com/authport/authport/core.PasswordProvider], "credential"),
// [github.com/authport/authport/core.AccountTypeOAuth] for every other.
type AccountColumns struct {
	UserID               string // default "userId"
	Type                 string // default "type"
	Provider             string // default "provider"
	ProviderAccountID    string // default "providerAccountId"
	AccessToken          string // default "access_token"
	AuthorizationDetails string // default "authorization_details"
	ExpiresAt            string // default "expires_at"
	ExpiresIn            string // default "expires_in"
	IDToken              string // default "id_token"
	RefreshToken         string // default "refresh_token"
	Scope                string // default "scope"
	TokenType            string // default "token_type"
	SessionState         string // default "session_state"
	// Password is the nullable column of a password account's hash
	// ([github.com/authport/authport/core.Account.PasswordHash]), named
	// as in Better Auth's account table (default "password"). [Omit]: the
	// table keeps none (the Auth.js presets), and the adapter reports
	// swapPasswordHash omitted; see [WithPasswordHashColumn].
	Password string
}

// SessionColumns are the column names of the sessions table. The last
// four hold the session's metadata
// ([github.com/authport/authport/core.Session] CreatedAt, UpdatedAt,
// IPAddress, UserAgent), named as in Better Auth's session table; each may
// be [Omit] (the Auth.js presets omit all four: their tables have no room
// for them), and is then neither written nor read (it reads back as the
// zero value). The metadata columns are nullable: a zero time or an empty
// string is stored as NULL. See [WithSessionMetadataColumns] for naming
// them after a preset, and [WithTimestampColumns] for how its sessions
// columns and these are one.
type SessionColumns struct {
	SessionToken string // default "sessionToken"
	UserID       string // default "userId"
	Expires      string // default "expires"
	CreatedAt    string // default "createdAt"; Omit: not kept
	UpdatedAt    string // default "updatedAt"; Omit: not kept
	IPAddress    string // default "ipAddress"; Omit: not kept
	UserAgent    string // default "userAgent"; Omit: not kept
}

// numSessionKeyColumns is how many of [SessionColumns] are required; the
// metadata columns follow them.
const numSessionKeyColumns = 3

// metadata returns the four metadata column names, in the order of
// [SessionColumns]: created, updated, IP address, user agent.
func (c SessionColumns) metadata() [4]string {
	return [4]string{c.CreatedAt, c.UpdatedAt, c.IPAddress, c.UserAgent}
}

// sessionColumnsOmitted are the session columns of the Auth.js presets:
// the standard names and no metadata.
func sessionColumnsOmitted() SessionColumns {
	return SessionColumns{CreatedAt: Omit, UpdatedAt: Omit, IPAddress: Omit, UserAgent: Omit}
}

// VerificationTokenColumns are the column names of the verification token
// table.
type VerificationTokenColumns struct {
	Identifier string // default "identifier"
	Token      string // default "token"
	Expires    string // default "expires"
}

// AuthenticatorColumns are the column names of the authenticators table.
type AuthenticatorColumns struct {
	CredentialID         string // default "credentialID"
	UserID               string // default "userId"
	ProviderAccountID    string // default "providerAccountId"
	CredentialPublicKey  string // default "credentialPublicKey"
	Counter              string // default "counter"
	CredentialDeviceType string // default "credentialDeviceType"
	CredentialBackedUp   string // default "credentialBackedUp"
	Transports           string // default "transports"
}

// FactorColumns are the column names of the factors table, which keeps
// users' second factors ([github.com/authport/authport/core.Factor]).
type FactorColumns struct {
	ID         string // default "id"
	UserID     string // default "userId"
	Type       string // default "type"
	Name       string // default "name"
	Secret     string // default "secret"
	Step       string // default "step"
	CreatedAt  string // default "createdAt"
	LastUsedAt string // default "lastUsedAt"
}

// DefaultNames returns the names the adapter uses unless told otherwise.
// They follow Auth.js's pg adapter (tables users, accounts, sessions,
// verification_token; camelCase columns "userId", "providerAccountId",
// "sessionToken", "emailVerified" and snake_case token columns), with the
// authenticators table named after Auth.js's Prisma Authenticator model.
func DefaultNames() Names {
	return Names{
		Users:              "users",
		Accounts:           "accounts",
		Sessions:           "sessions",
		VerificationTokens: "verification_token",
		Authenticators:     "authenticators",
		Factors:            "factors",
		User: UserColumns{
			ID: "id", Email: "email", EmailVerified: "emailVerified", Name: "name", Image: "image",
			Username: "username",
		},
		Account: AccountColumns{
			UserID: "userId", Type: "type", Provider: "provider", ProviderAccountID: "providerAccountId",
			AccessToken: "access_token", AuthorizationDetails: "authorization_details",
			ExpiresAt: "expires_at", ExpiresIn: "expires_in", IDToken: "id_token",
			RefreshToken: "refresh_token", Scope: "scope", TokenType: "token_type",
			SessionState: "session_state", Password: "password",
		},
		Session: SessionColumns{SessionToken: "sessionToken", UserID: "userId", Expires: "expires",
			CreatedAt: "createdAt", UpdatedAt: "updatedAt", IPAddress: "ipAddress", UserAgent: "userAgent"},
		VerificationToken: VerificationTokenColumns{
			Identifier: "identifier", Token: "token", Expires: "expires",
		},
		Authenticator: AuthenticatorColumns{
			CredentialID: "credentialID", UserID: "userId", ProviderAccountID: "providerAccountId",
			CredentialPublicKey: "credentialPublicKey", Counter: "counter",
			CredentialDeviceType: "credentialDeviceType", CredentialBackedUp: "credentialBackedUp",
			Transports: "transports",
		},
		Factor: FactorColumns{
			ID: "id", UserID: "userId", Type: "type", Name: "name", Secret: "secret", Step: "step",
			CreatedAt: "createdAt", LastUsedAt: "lastUsedAt",
		},
	}
}

// withDefaults returns n with every empty name replaced by its default.
func (n Names) withDefaults() Names {
	fillDefaults(reflect.ValueOf(&n).Elem(), reflect.ValueOf(DefaultNames()))
	return n
}

// fillDefaults sets every empty string field of v (Names, or one of its
// column structs, which hold only strings) to the same field of d.
func fillDefaults(v, d reflect.Value) {
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			if f.String() == "" {
				f.SetString(d.Field(i).String())
			}
		case reflect.Struct:
			fillDefaults(f, d.Field(i))
		}
	}
}

// validate reports names that cannot be used: invalid UTF-8, a NUL byte,
// [Omit] where a column is required, two columns of one table with the same
// name, or two tables with the same name.
func (n Names) validate() error {
	check := func(what, v string) error {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return fmt.Errorf("name of %s %q is not valid UTF-8 without NUL", what, v)
		}
		if v == Omit {
			return fmt.Errorf("%s cannot be omitted", what)
		}
		return nil
	}
	tables := map[string]bool{}
	for _, t := range []struct{ what, v string }{
		{"users table", n.Users}, {"accounts table", n.Accounts}, {"sessions table", n.Sessions},
		{"verification token table", n.VerificationTokens}, {"authenticators table", n.Authenticators},
		{"factors table", n.Factors},
	} {
		if t.v == Omit && (t.what == "authenticators table" || t.what == "factors table") {
			continue
		}
		if err := check(t.what, t.v); err != nil {
			return err
		}
		for _, part := range strings.Split(t.v, ".") {
			if part == "" {
				return fmt.Errorf("%s name %q has an empty part", t.what, t.v)
			}
		}
		if tables[t.v] {
			return fmt.Errorf("table name %q is used twice", t.v)
		}
		tables[t.v] = true
	}
	defaults := DefaultNames()
	for t := TableUsers; t <= TableFactors; t++ {
		what := defaults.columnNames(t)
		seen := map[string]bool{}
		for i, c := range n.columnNames(t) {
			if c == Omit && ((t == TableAccounts && (i >= 4 || i == 1)) || // the type, the optional token columns
				(t == TableUsers && i == numUserColumns) || // the username
				(t == TableSessions && i >= numSessionKeyColumns)) { // the metadata columns
				continue
			}
			if err := check("column "+t.String()+"."+what[i], c); err != nil {
				return err
			}
			if seen[c] {
				return fmt.Errorf("column name %q is used twice in one table", c)
			}
			seen[c] = true
		}
	}
	return nil
}

// columnNames returns the names of table t's columns, omitted ones
// included, in the order of the fields of its column struct
// ([UserColumns] … [FactorColumns]), which hold only names.
func (n Names) columnNames(t Table) []string {
	var cs any
	switch t {
	case TableUsers:
		cs = n.User
	case TableAccounts:
		cs = n.Account
	case TableSessions:
		cs = n.Session
	case TableVerificationTokens:
		cs = n.VerificationToken
	case TableAuthenticators:
		cs = n.Authenticator
	case TableFactors:
		cs = n.Factor
	default:
		return nil
	}
	v := reflect.ValueOf(cs)
	out := make([]string, v.NumField())
	for i := range out {
		out[i] = v.Field(i).String()
	}
	return out
}

// columns returns the names of table t's columns (omitted ones left out).
func (n Names) columns(t Table) []string {
	var out []string
	for _, c := range n.columnNames(t) {
		if c != Omit {
			out = append(out, c)
		}
	}
	return out
}

// validateStamps reports timestamp columns (WithTimestampColumns) that
// cannot be used: invalid names, one name twice, a name the table already
// uses for another column, or columns for an omitted table.
func (n Names) validateStamps(stamps [numTables]stampCols) error {
	for t := TableUsers; t <= TableFactors; t++ {
		s := stamps[t]
		if s.created == "" && s.updated == "" && s.id == "" {
			continue
		}
		if (t == TableAuthenticators && n.Authenticators == Omit) || (t == TableFactors && n.Factors == Omit) {
			return fmt.Errorf("timestamp columns for the omitted %v table", t)
		}
		if s.created != "" && s.created == s.updated {
			return fmt.Errorf("%v: created and updated timestamp columns are both %q", t, s.created)
		}
		if s.id != "" && (s.id == s.created || s.id == s.updated) {
			return fmt.Errorf("%v: row id column %q is also a timestamp column", t, s.id)
		}
		for _, c := range []string{s.created, s.updated, s.id} {
			if c == "" {
				continue
			}
			if !utf8.ValidString(c) || strings.ContainsRune(c, 0) || c == Omit {
				return fmt.Errorf("%v: timestamp column name %q is not valid", t, c)
			}
			for _, other := range n.columns(t) {
				if other == c {
					return fmt.Errorf("%v: timestamp column %q is already the name of another column", t, c)
				}
			}
		}
	}
	return nil
}
