package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// MaxDataNameLength is the longest application field name [ValidDataName]
// accepts: the identifier limit of PostgreSQL and MySQL, so that every
// adapter can keep a field as a column of its own.
const MaxDataNameLength = 63

// ValidDataName reports whether name can name an application field of a
// user ([User.Data]): an ASCII letter or underscore, then letters, digits or
// underscores, at most [MaxDataNameLength] long, and not one of the
// standard fields (id, email, emailVerified, username, name, image) in any
// case.
func ValidDataName(name string) error {
	if name == "" || len(name) > MaxDataNameLength {
		return fmt.Errorf("application field name %q must be 1 to %d characters", name, MaxDataNameLength)
	}
	for i, r := range name {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return fmt.Errorf("application field name %q must be letters, digits and underscores, not starting with a digit", name)
		}
	}
	// The standard fields, in the spellings adapters store them under
	// (Auth.js's and the snake_case presets'), and MongoDB's document id.
	switch strings.ToLower(name) {
	case "id", "_id", "email", "emailverified", "email_verified", "username", "name", "image":
		return fmt.Errorf("application field name %q is a standard user field; choose another name", name)
	}
	return nil
}

// validateData checks the names and values of application fields. An
// update may remove fields (nil or JSON null); a new user's fields must be
// values.
func validateData(m Method, data map[string]json.RawMessage, update bool) error {
	for name, v := range data {
		if err := ValidDataName(name); err != nil {
			return invalid(string(m), "data", err.Error())
		}
		if isNull(v) {
			if !update {
				return invalid(string(m), "data."+name, "must not be null (leave the field out instead)")
			}
			continue
		}
		if !json.Valid(v) {
			return invalid(string(m), "data."+name, "must be a single valid JSON value")
		}
	}
	return nil
}

// isNull reports whether v removes a field: nil, empty or the JSON null.
func isNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || bytes.Equal(v, []byte("null"))
}

// MergeData returns stored with the changes of an update applied: a value
// sets its field, nil or JSON null removes it. It returns nil when no field
// is left, and never changes its arguments.
func MergeData(stored, changes map[string]json.RawMessage) map[string]json.RawMessage {
	out := cloneData(stored)
	for name, v := range changes {
		if isNull(v) {
			delete(out, name)
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(changes))
		}
		out[name] = bytes.Clone(bytes.TrimSpace(v))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cloneData returns a deep copy of data, nil for an empty map.
func cloneData(data map[string]json.RawMessage) map[string]json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	out := maps.Clone(data)
	for k, v := range out {
		out[k] = bytes.Clone(v)
	}
	return out
}

// UserField is one application field on users, with its Go type: the typed
// way to read and write [User.Data]. Declare it once:
//
//	var Role = core.UserField[string]{Name: "role"}
//
// then read it with Get and change it with Set or Clear on a [UserUpdate]
// (ExampleUserField; the README's "A role on the user" stores one when a
// user is created and shows it in the session).
type UserField[T any] struct {
	// Name is the field's name; see [ValidDataName].
	Name string
}

// Get returns the field's value on u, and whether u has it. A value that
// does not decode into T is an error naming the field.
func (f UserField[T]) Get(u *User) (T, bool, error) {
	var v T
	if u == nil {
		return v, false, nil
	}
	raw, ok := u.Data[f.Name]
	if !ok {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false, fmt.Errorf("user field %s: %w", f.Name, err)
	}
	return v, true, nil
}

// Put sets the field to v on a user about to be created.
func (f UserField[T]) Put(u *User, v T) error { return f.put(&u.Data, v) }

// Set makes up set the field to v, leaving the user's other fields alone.
func (f UserField[T]) Set(up *UserUpdate, v T) error { return f.put(&up.Data, v) }

// Clear makes up remove the field.
func (f UserField[T]) Clear(up *UserUpdate) { setData(&up.Data, f.Name, nil) }

// put stores v, encoded, under the field's name in *data.
func (f UserField[T]) put(data *map[string]json.RawMessage, v T) error {
	raw, err := f.encode(v)
	if err != nil {
		return err
	}
	setData(data, f.Name, raw)
	return nil
}

// setData sets (*data)[name] to raw, making the map when it is nil.
func setData(data *map[string]json.RawMessage, name string, raw json.RawMessage) {
	if *data == nil {
		*data = make(map[string]json.RawMessage)
	}
	(*data)[name] = raw
}

func (f UserField[T]) encode(v T) (json.RawMessage, error) {
	if err := ValidDataName(f.Name); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("user field %s: %w", f.Name, err)
	}
	if isNull(raw) {
		return nil, fmt.Errorf("user field %s: a null value removes the field; use Clear", f.Name)
	}
	return raw, nil
}
