package gormadapter

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/authport/authport/core"
	"gorm.io/gorm"
)

// errKind is what a database error means to a caller.
type errKind int

const (
	kindOther    errKind = iota
	kindExists           // a unique or primary key violation
	kindNotFound         // a foreign key violation: the referenced user is missing
	kindInvalid          // a value the database cannot hold
)

// pgKind maps a PostgreSQL SQLSTATE.
func pgKind(code string) errKind {
	switch code {
	case "23505": // unique_violation
		return kindExists
	case "23503": // foreign_key_violation
		return kindNotFound
	case "22021", // character_not_in_repertoire (NUL, bad UTF-8)
		"22P05", // untranslatable_character
		"22P02", // invalid_text_representation ("abc" for an integer id)
		"22001", // string_data_right_truncation
		"22003", // numeric_value_out_of_range
		"22007", // invalid_datetime_format
		"22008", // datetime_field_overflow
		"23502", // not_null_violation
		"23514", // check_violation
		"54000": // program_limit_exceeded (index row too large)
		return kindInvalid
	}
	return kindOther
}

// mysqlKind maps a MySQL or MariaDB error number.
func mysqlKind(number uint16) errKind {
	switch number {
	case 1062, // ER_DUP_ENTRY
		1586: // ER_DUP_ENTRY_WITH_KEY_NAME
		return kindExists
	case 1452, // ER_NO_REFERENCED_ROW_2
		1216: // ER_NO_REFERENCED_ROW
		return kindNotFound
	case 1366, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (bad string)
		1406, // ER_DATA_TOO_LONG
		1292, // ER_TRUNCATED_WRONG_VALUE (bad datetime)
		1264, // ER_WARN_DATA_OUT_OF_RANGE
		1048, // ER_BAD_NULL_ERROR
		1300, // ER_INVALID_CHARACTER_STRING
		3140, // ER_INVALID_JSON_TEXT
		4025: // ER_CONSTRAINT_FAILED (MariaDB CHECK)
		return kindInvalid
	}
	return kindOther
}

// sqliteKind maps a SQLite extended result code (or its primary code).
func sqliteKind(code int) errKind {
	switch code {
	case 2067, // SQLITE_CONSTRAINT_UNIQUE
		1555: // SQLITE_CONSTRAINT_PRIMARYKEY
		return kindExists
	case 787: // SQLITE_CONSTRAINT_FOREIGNKEY
		return kindNotFound
	case 1299, // SQLITE_CONSTRAINT_NOTNULL
		275, // SQLITE_CONSTRAINT_CHECK
		18,  // SQLITE_TOOBIG
		20:  // SQLITE_MISMATCH
		return kindInvalid
	}
	return kindOther
}

// classify reads the driver error codes. The adapter imports no database
// driver, so that a program links only the driver of the dialector it
// opens (a PostgreSQL program no MySQL or SQLite driver, and needs no cgo):
// each driver's error is recognised by its shape instead of its type (see
// pgState, mysqlNumber and sqliteCode); the dialector's gorm error
// translation is the last resort.
func (a *Adapter) classify(err error) errKind {
	if code, ok := pgState(err); ok {
		return pgKind(code)
	}
	if number, ok := mysqlNumber(err); ok {
		return mysqlKind(number)
	}
	if a.d.sqlite() {
		if code, ok := sqliteCode(err); ok {
			if k := sqliteKind(code); k != kindOther {
				return k
			}
			if k := sqliteKind(code & 0xff); k != kindOther {
				return k
			}
		}
	}
	if a.translator != nil {
		switch t := a.translator.Translate(err); {
		case errors.Is(t, gorm.ErrDuplicatedKey):
			return kindExists
		case errors.Is(t, gorm.ErrForeignKeyViolated):
			return kindNotFound
		case errors.Is(t, gorm.ErrCheckConstraintViolated):
			return kindInvalid
		}
	}
	return kindOther
}

// sqlStater is a PostgreSQL driver's error: pgx's *pgconn.PgError (and
// lib/pq's *pq.Error) report their SQLSTATE through this method.
type sqlStater interface{ SQLState() string }

// pgState finds a PostgreSQL SQLSTATE in err's tree.
func pgState(err error) (string, bool) {
	var s sqlStater
	if errors.As(err, &s) {
		return s.SQLState(), true
	}
	return "", false
}

// mysqlNumber finds a MySQL or MariaDB server error number in err's tree:
// go-sql-driver/mysql's *MySQLError, whose number is its uint16 field
// Number (it has no method to read it by). The type is matched by its
// package path and that field, so that the adapter does not import the
// driver.
func mysqlNumber(err error) (number uint16, ok bool) {
	walkErrors(err, func(e error) bool {
		v := reflect.ValueOf(e)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct || v.Type().Name() != "MySQLError" || !strings.HasSuffix(v.Type().PkgPath(), "go-sql-driver/mysql") {
			return false
		}
		if f := v.FieldByName("Number"); f.IsValid() && f.Kind() == reflect.Uint16 {
			number, ok = uint16(f.Uint()), true
		}
		return ok
	})
	return number, ok
}

// walkErrors calls visit on err and the errors it wraps, depth first as
// errors.As goes, until visit returns true.
func walkErrors(err error, visit func(error) bool) bool {
	if err == nil {
		return false
	}
	if visit(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walkErrors(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if walkErrors(e, visit) {
				return true
			}
		}
	}
	return false
}

// keyUnusable reports a PostgreSQL error saying a value given to a lookup
// cannot be converted to its column's type: 22P02 (invalid text
// representation: "abc" for a SERIAL id) or 22003 (out of range). No row
// can hold such a key, so the lookups and deletes keyed by it find nothing
// (nil, nil), as core.Store does for a key no write could store; writes report the same errors as core.ErrInvalidInput.
func keyUnusable(err error) bool {
	if err == nil {
		return false // before pg escapes: lookups that succeed allocate nothing here
	}
	code, ok := pgState(err)
	return ok && (code == "22P02" || code == "22003")
}

// errNoAuthenticators is what the authenticator methods return when the
// authenticators table is omitted (Names.Authenticators is Omit).
func errNoAuthenticators() error {
	return fmt.Errorf("the authenticators table is omitted (Names.Authenticators is gormadapter.Omit): %w: %w",
		core.ErrMissingAdapterMethod, errors.ErrUnsupported)
}

// sqliteCode finds a SQLite extended result code in err's tree:
// modernc.org/sqlite's error has a Code() int method, go-sqlite3's
// sqlite3.Error an ExtendedCode field (an integer type of its package).
func sqliteCode(err error) (code int, ok bool) {
	walkErrors(err, func(e error) bool {
		if c, is := e.(interface{ Code() int }); is {
			code, ok = c.Code(), true
			return true
		}
		v := reflect.ValueOf(e)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Struct && strings.Contains(v.Type().PkgPath(), "sqlite") {
			if f := v.FieldByName("ExtendedCode"); f.IsValid() && f.CanInt() {
				code, ok = int(f.Int()), true
			}
		}
		return ok
	})
	return code, ok
}

// wrap turns a database error into the adapter's error: where the
// driver's code says what it means, wrapped with core.ErrAlreadyExists,
// core.ErrNotFound or core.ErrInvalidInput. The driver's error stays in the
// chain; the method's name is added by core.Store.
func (a *Adapter) wrap(err error) error {
	if err == nil {
		return nil
	}
	switch a.classify(err) {
	case kindExists:
		return fmt.Errorf("%w: %w", core.ErrAlreadyExists, err)
	case kindNotFound:
		return fmt.Errorf("%w (referenced user does not exist): %w", core.ErrNotFound, err)
	case kindInvalid:
		return fmt.Errorf("%w (rejected by the database): %w", core.ErrInvalidInput, err)
	}
	return err
}

// notNullViolation reports a database's refusal of NULL in a NOT NULL
// column: PostgreSQL's 23502, MySQL's and MariaDB's 1048
// (ER_BAD_NULL_ERROR), SQLite's SQLITE_CONSTRAINT_NOTNULL (1299).
func notNullViolation(err error) bool {
	if code, ok := pgState(err); ok {
		return code == "23502"
	}
	if number, ok := mysqlNumber(err); ok {
		return number == 1048
	}
	code, ok := sqliteCode(err)
	return ok && code == 1299
}
