package mongoadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Application fields of users ([core.User.Data]) are top-level fields of
// the user document, beside the standard ones, as another application
// sharing the users collection (an Auth.js app with extra fields) writes
// them. Every field of a stored user that is not a standard one and whose
// name is a valid application field name ([core.ValidDataName]) is read into
// Data; updates set ($set) and remove ($unset) only the fields they name.

// UnmarshalBSON decodes a stored user document: the standard fields, and
// every other field as an application field.
func (d *userDoc) UnmarshalBSON(b []byte) error {
	elems, err := bson.Raw(b).Elements()
	if err != nil {
		return err
	}
	*d = userDoc{}
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		switch k {
		case fID:
			d.ID = v
		case fEmail, fUsername:
			// An absent field or null (as Auth.js writes a user without
			// an address) is "".
			p, err := optString(k, v)
			if err != nil {
				return err
			}
			if p != nil && k == fEmail {
				d.Email = *p
			} else if p != nil {
				d.Username = *p
			}
		case fEmailVerified:
			if b, ok := v.BooleanOK(); ok {
				// Better Auth's boolean ([BetterAuth]).
				d.Verified = &b
				continue
			}
			if !isNull(v) {
				t, ok := v.DateTimeOK()
				if !ok {
					return fmt.Errorf("emailVerified has BSON type %v, want date or boolean", v.Type)
				}
				dt := bson.DateTime(t)
				d.EmailVerified = &dt
			}
		case fName:
			if d.Name, err = optString(k, v); err != nil {
				return err
			}
		case fImage:
			if d.Image, err = optString(k, v); err != nil {
				return err
			}
		default:
			if isNull(v) || core.ValidDataName(k) != nil {
				continue
			}
			if ms, ok := v.DateTimeOK(); ok && k == baEmailVerifiedAt {
				dt := bson.DateTime(ms)
				d.VerifiedAt = &dt
			}
			j, err := jsonOf(v)
			if err != nil {
				return fmt.Errorf("application field %s: %w", k, err)
			}
			if d.Data == nil {
				d.Data = make(map[string]json.RawMessage)
			}
			d.Data[k] = j
		}
	}
	return nil
}

// optString decodes a nullable string field.
func optString(key string, v bson.RawValue) (*string, error) {
	if isNull(v) {
		return nil, nil
	}
	s, ok := v.StringValueOK()
	if !ok {
		return nil, fmt.Errorf("%s has BSON type %v, want string", key, v.Type)
	}
	return &s, nil
}

// jsonOf returns a stored value as JSON: strings, numbers, booleans,
// documents and arrays as such; other BSON types in MongoDB's relaxed
// extended JSON.
func jsonOf(v bson.RawValue) (json.RawMessage, error) {
	switch v.Type {
	case bson.TypeString:
		return json.Marshal(v.StringValue())
	case bson.TypeBoolean:
		return strconv.AppendBool(nil, v.Boolean()), nil
	case bson.TypeInt32:
		return strconv.AppendInt(nil, int64(v.Int32()), 10), nil
	case bson.TypeInt64:
		return strconv.AppendInt(nil, v.Int64(), 10), nil
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return nil, err
	}
	var w struct{ V json.RawMessage }
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	return w.V, nil
}

// bsonOf returns the stored form of a JSON value: integers as int64 (or a
// double when they do not fit), other numbers as doubles, objects as
// documents (keys sorted), arrays as arrays. The value must be valid JSON
// (core.Store checks it).
func bsonOf(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
	}
	return bsonValue(x), nil
}

func bsonValue(x any) any {
	switch v := x.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		doc := make(bson.D, 0, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			doc = append(doc, bson.E{Key: k, Value: bsonValue(v[k])})
		}
		return doc
	case []any:
		arr := make(bson.A, len(v))
		for i, e := range v {
			arr[i] = bsonValue(e)
		}
		return arr
	}
	return x
}

// dataNames returns the names of an operation's application fields,
// sorted, or an [*core.InputError] of method m when one is a standard field
// of this adapter's user documents that core does not reserve (username;
// with [BetterAuth] also createdAt, updatedAt and emailVerifiedAt).
func dataNames(m core.Method, data map[string]json.RawMessage) ([]string, error) {
	return dataNamesIn(m, data, false)
}

func dataNamesIn(m core.Method, data map[string]json.RawMessage, ba bool) ([]string, error) {
	names := slices.Sorted(maps.Keys(data))
	taken := []string{fUsername}
	if ba {
		taken = append(taken, fCreatedAt, fUpdatedAt, baEmailVerifiedAt)
	}
	for _, k := range taken {
		if _, ok := data[k]; ok {
			return nil, &core.InputError{Method: string(m), Field: "data", Reason: "names " + k + ", a field the adapter stores itself; choose another name"}
		}
	}
	return names, nil
}

// appendData appends the application fields to a new user's document,
// sorted by name.
func (a *Adapter) appendData(doc bson.D, data map[string]json.RawMessage) (bson.D, error) {
	names, err := dataNamesIn(core.MethodCreateUser, data, a.ba)
	if err != nil {
		return nil, err
	}
	for _, k := range names {
		v, err := bsonOf(data[k])
		if err != nil {
			return nil, err
		}
		doc = append(doc, bson.E{Key: k, Value: v})
	}
	return doc, nil
}

// dataUpdate splits an update's application fields into the fields to set
// and those to remove (nil or JSON null).
func (a *Adapter) dataUpdate(data map[string]json.RawMessage) (set, unset bson.D, err error) {
	names, err := dataNamesIn(core.MethodUpdateUser, data, a.ba)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range names {
		raw := bytes.TrimSpace(data[k])
		if len(raw) == 0 || string(raw) == "null" {
			unset = append(unset, bson.E{Key: k, Value: ""})
			continue
		}
		v, err := bsonOf(raw)
		if err != nil {
			return nil, nil, err
		}
		set = append(set, bson.E{Key: k, Value: v})
	}
	return set, unset, nil
}
