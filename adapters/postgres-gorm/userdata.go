package gormadapter

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
)

// Application data on users ([core.User.Data]) is kept in columns of the
// users table: each field is the column of the same name, as an Auth.js
// application adds them ("role", "tenantId"). The adapter learns the
// table's columns from the database (at [New] and [Adapter.Migrate], and
// again when a write names a field it does not know), reads every column
// that is not one of its own into Data, and writes only the columns a
// create or update names.

// dataKind is how a column's values map to JSON.
type dataKind int

const (
	kindText  dataKind = iota // strings; other JSON values as their text
	kindBool                  // true, false
	kindInt                   // integral numbers
	kindFloat                 // numbers
	kindJSON                  // any JSON value, stored as JSON
	kindTime                  // RFC 3339 strings
)

// dataColumn is one extra column of the users table.
type dataColumn struct {
	name string
	kind dataKind
	// typ is the column's type as the database reports it, for errors.
	typ string
}

// kindOf maps a column type as gorm's Migrator reports it ("boolean",
// "tinyint(1)", "jsonb", "bigint", "numeric(10,2)", "timestamp with time
// zone", "varchar(64)", …) to how its values map to JSON.
func kindOf(typ string) dataKind {
	t := strings.ToLower(strings.TrimSpace(typ))
	switch {
	case strings.Contains(t, "bool"), t == "tinyint(1)", t == "bit(1)":
		return kindBool
	case strings.Contains(t, "json"):
		return kindJSON
	case strings.Contains(t, "int") && !strings.Contains(t, "interval") && !strings.Contains(t, "point"),
		strings.Contains(t, "serial"):
		return kindInt
	case strings.Contains(t, "real"), strings.Contains(t, "double"), strings.Contains(t, "float"),
		strings.Contains(t, "numeric"), strings.Contains(t, "decimal"):
		return kindFloat
	case strings.Contains(t, "timestamp"), strings.Contains(t, "datetime"), t == "date":
		return kindTime
	}
	return kindText
}

// discoverUserColumns reads the users table's columns and returns the
// ones that are not the adapter's own (the standard user columns and the
// timestamp columns), sorted by name; the username column as the table
// has it ([Omit] when an existing table lacks the configured one); and
// whether the table exists. Columns whose names cannot name a field
// ([core.ValidDataName]) are left out.
func (a *Adapter) discoverUserColumns(ctx context.Context) (extras []dataColumn, username string, exists bool, err error) {
	all, err := a.tableColumns(ctx, a.names.Users)
	if err != nil {
		return nil, "", false, fmt.Errorf("reading the columns of table %s: %w", a.names.Users, err)
	}
	own := a.ownUserColumns()
	var out []dataColumn
	for _, c := range all {
		if own(c[0]) || core.ValidDataName(c[0]) != nil {
			continue
		}
		out = append(out, dataColumn{name: c[0], kind: kindOf(c[1]), typ: c[1]})
	}
	slices.SortFunc(out, func(x, y dataColumn) int { return strings.Compare(x.name, y.name) })
	return out, a.presentColumn(all, a.names.User.Username), len(all) > 0, nil
}

// presentColumn returns the configured column c as a table with the
// columns all has it: c, or [Omit] when the table exists (all is not
// empty) and lacks it. A table not created yet will have it.
func (a *Adapter) presentColumn(all [][2]string, c string) string {
	if c == Omit || len(all) == 0 || a.hasColumn(all, c) {
		return c
	}
	return Omit
}

// hasColumn reports whether all (tableColumns) has the column c, compared
// as the database compares column names.
func (a *Adapter) hasColumn(all [][2]string, c string) bool {
	return slices.ContainsFunc(all, func(have [2]string) bool {
		return have[0] == c || (a.d.mysql() && strings.EqualFold(have[0], c))
	})
}

// discoverPasswordColumn returns the accounts table's password hash column
// as the table has it (see presentColumn).
func (a *Adapter) discoverPasswordColumn(ctx context.Context) (string, error) {
	c := a.names.Account.Password
	if c == Omit {
		return c, nil
	}
	all, err := a.tableColumns(ctx, a.names.Accounts)
	if err != nil {
		return "", fmt.Errorf("reading the columns of table %s: %w", a.names.Accounts, err)
	}
	return a.presentColumn(all, c), nil
}

// tableColumns returns the name and type of each column of a table, none
// when there is no such table: from the catalog on PostgreSQL (a query
// whose result has the table's shape would be cached by pgx, and fail once
// the table changes) and MySQL/MariaDB (where BOOLEAN is TINYINT(1), which
// a result's description does not tell), from the description of an empty
// result on SQLite.
func (a *Adapter) tableColumns(ctx context.Context, table string) ([][2]string, error) {
	var rows *sql.Rows
	var err error
	switch {
	case a.d.postgres():
		rows, err = a.db.QueryContext(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, a.d.table(table))
	case a.d.mysql():
		rows, err = a.db.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS
			WHERE `+mysqlColumnOf(table, "")+` ORDER BY ORDINAL_POSITION`)
	default:
		return a.sqliteColumns(ctx, table)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var c [2]string
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// sqliteColumns is tableColumns on SQLite: the declared types.
func (a *Adapter) sqliteColumns(ctx context.Context, table string) ([][2]string, error) {
	rows, err := a.db.QueryContext(ctx, "SELECT * FROM "+a.d.table(table)+" WHERE 1 = 0")
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil
		}
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	out := make([][2]string, len(types))
	for i, ct := range types {
		out[i] = [2]string{ct.Name(), ct.DatabaseTypeName()}
	}
	return out, nil
}

// ownUserColumns reports whether a users column is one the adapter
// manages: the standard fields and the timestamp columns.
func (a *Adapter) ownUserColumns() func(string) bool {
	uc, st := a.names.User, a.stamps[TableUsers]
	own := []string{uc.ID, uc.Email, uc.EmailVerified, uc.Name, uc.Image, uc.Username, st.created, st.updated}
	return func(name string) bool {
		for _, o := range own {
			if o != "" && o != Omit && (o == name || (a.d.mysql() && strings.EqualFold(o, name))) {
				return true
			}
		}
		return false
	}
}

// discoverSessionMeta returns the configured session metadata columns
// (a.meta) without those an existing sessions table lacks; all of them
// when there is no such table yet.
func (a *Adapter) discoverSessionMeta(ctx context.Context) (sessionMeta, error) {
	m := a.meta
	if len(m.kept()) == 0 {
		return m, nil
	}
	all, err := a.tableColumns(ctx, a.names.Sessions)
	if err != nil || len(all) == 0 {
		return m, err
	}
	for i, c := range m.cols {
		m.cols[i] = a.presentColumn(all, c)
	}
	return m, nil
}

// refreshUserColumns discovers the users table's columns (and the
// sessions table's metadata columns, discoverSessionMeta, and the
// accounts table's password hash column) again and, when they changed,
// rebuilds the statements with them. It returns the statements in use
// afterwards.
func (a *Adapter) refreshUserColumns(ctx context.Context) (*queries, error) {
	a.rebuild.Lock()
	defer a.rebuild.Unlock()
	n := a.names
	cols, username, exists, err := a.discoverUserColumns(ctx)
	if err != nil {
		return a.qs(), err
	}
	meta, err := a.discoverSessionMeta(ctx)
	if err != nil {
		return a.qs(), fmt.Errorf("reading the columns of table %s: %w", a.names.Sessions, err)
	}
	password, err := a.discoverPasswordColumn(ctx)
	if err != nil {
		return a.qs(), err
	}
	n.User.Username, n.Account.Password = username, password
	old := a.qs()
	if exists == old.usersKnown && slices.Equal(cols, old.extras) && meta == old.meta && n == old.names {
		return old, nil
	}
	q := buildQueries(&a.d, n, a.stamps, a.noFK, cols, meta)
	q.usersKnown = exists
	a.q.Store(q)
	a.retired = append(a.retired, old)
	return q, nil
}

// dataColumns returns the statements in use and the columns of the fields
// named in data, discovering the table's columns again when one is
// unknown. A field with no column is an [*core.InputError] naming the
// column to add; so is one naming a timestamp column.
func (a *Adapter) dataColumns(ctx context.Context, m core.Method, data map[string]json.RawMessage) (*queries, []dataColumn, error) {
	q := a.qs()
	if len(data) == 0 {
		return q, nil, nil
	}
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	slices.Sort(names)
	for attempt := 0; ; attempt++ {
		cols, missing := q.columnsOf(names)
		if missing == "" {
			return q, cols, nil
		}
		if attempt > 0 || a.ownUserColumns()(missing) {
			return nil, nil, &core.InputError{Method: string(m), Field: "data." + missing, Reason: a.noColumn(missing)}
		}
		var err error
		if q, err = a.refreshUserColumns(ctx); err != nil {
			return nil, nil, err
		}
	}
}

// columnsOf returns the extra columns named, or the first name without one.
func (q *queries) columnsOf(names []string) ([]dataColumn, string) {
	out := make([]dataColumn, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(q.extras, func(c dataColumn) bool { return c.name == n })
		if i < 0 {
			return nil, n
		}
		out = append(out, q.extras[i])
	}
	return out, ""
}

// noColumn says what to do about a field the users table has no column for.
func (a *Adapter) noColumn(name string) string {
	if a.ownUserColumns()(name) {
		return fmt.Sprintf("is the adapter's own column %q of table %s, not an application field", name, a.names.Users)
	}
	return fmt.Sprintf("has no column in table %s: application fields are columns of the users table; add it, e.g. ALTER TABLE %s ADD COLUMN %s %s",
		a.names.Users, a.d.table(a.names.Users), a.d.ident(name), a.d.colType(tText))
}

// dataArg converts a field's JSON value to the bind parameter of its
// column: nil for JSON null (the column is set to NULL).
func (a *Adapter) dataArg(m core.Method, c dataColumn, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	bad := func(want string) error {
		return &core.InputError{Method: string(m), Field: "data." + c.name,
			Reason: fmt.Sprintf("must be %s: column %q of table %s is %s", want, c.name, a.names.Users, c.typ)}
	}
	var str string
	isStr := raw[0] == '"' && json.Unmarshal(raw, &str) == nil
	switch c.kind {
	case kindBool:
		switch string(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, bad("true or false")
	case kindInt:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, bad("an integer")
		}
		return n, nil
	case kindFloat:
		if isStr || raw[0] == '{' || raw[0] == '[' || raw[0] == 't' || raw[0] == 'f' {
			return nil, bad("a number")
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return nil, bad("a number")
		}
		return f, nil
	case kindTime:
		t, err := time.Parse(time.RFC3339Nano, str)
		if !isStr || err != nil {
			return nil, bad("an RFC 3339 time string")
		}
		t = core.NormalizeTime(t)
		if err := checkTime(m, "data."+c.name, &t); err != nil {
			return nil, err
		}
		return a.d.timeArg(t), nil
	case kindJSON:
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, bad("JSON")
		}
		return buf.String(), nil
	}
	if isStr {
		return str, nil
	}
	return string(raw), nil
}

// dataCell scans one extra column into its JSON value.
type dataCell struct {
	kind  dataKind
	value json.RawMessage // nil for SQL NULL
}

// Scan implements sql.Scanner.
func (c *dataCell) Scan(src any) error {
	c.value = nil
	v, err := cellJSON(c.kind, src)
	if err != nil {
		return err
	}
	c.value = v
	return nil
}

// cellJSON converts a column value, as a driver returns it, to JSON: nil
// for NULL.
func cellJSON(kind dataKind, src any) (json.RawMessage, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case bool:
		return json.Marshal(v)
	case int64:
		if kind == kindBool {
			return json.Marshal(v != 0)
		}
		return json.Marshal(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
		}
		return json.Marshal(v)
	case time.Time:
		return json.Marshal(core.NormalizeTime(v).Format(time.RFC3339Nano))
	case []byte:
		return textJSON(kind, string(v))
	case string:
		return textJSON(kind, v)
	case driver.Valuer:
		dv, err := v.Value()
		if err != nil {
			return nil, err
		}
		return cellJSON(kind, dv)
	}
	return json.Marshal(src)
}

// textJSON converts a column value a driver returned as text.
func textJSON(kind dataKind, s string) (json.RawMessage, error) {
	t := strings.TrimSpace(s)
	switch kind {
	case kindBool:
		switch strings.ToLower(t) {
		case "1", "t", "true":
			return json.RawMessage("true"), nil
		case "0", "f", "false":
			return json.RawMessage("false"), nil
		}
	case kindInt, kindFloat:
		var n json.Number
		if json.Unmarshal([]byte(t), &n) == nil {
			return json.RawMessage(t), nil
		}
	case kindTime:
		var nt nullTime
		if nt.parse(t) == nil {
			return json.Marshal(nt.t.Format(time.RFC3339Nano))
		}
	case kindJSON, kindText:
		// Objects and arrays are stored as their JSON text in text
		// columns too (MariaDB's JSON is LONGTEXT).
		if kind == kindJSON || (len(t) > 0 && (t[0] == '{' || t[0] == '[')) {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(t)) == nil {
				return json.RawMessage(buf.String()), nil
			}
		}
	}
	return json.Marshal(s)
}
