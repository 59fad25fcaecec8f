package recordcodec

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/authport/authport/core"
)

func ptr[T any](v T) *T { return &v }

// record appends one of every field kind.
func record() []byte {
	b := AppendStr(nil, "\x00é")
	b = AppendOptStr(b, nil)
	b = AppendOptStr(b, ptr(""))
	b = AppendTime(b, time.UnixMilli(-1))
	b = AppendOptTime(b, ptr(time.UnixMilli(1700000000123)))
	b = AppendOptVarint(b, ptr(int64(-1<<40)))
	b = AppendBool(b, true)
	b = AppendOptList(b, []string{})
	b = AppendOptList(b, []string{"a", ""})
	b = AppendUvarint(b, 300)
	return AppendData(b, map[string]json.RawMessage{"z": json.RawMessage(`1`), "a": json.RawMessage(`"x"`)})
}

// readRecord reads what record appends and reports a mismatch.
func readRecord(t *testing.T, r *Reader) {
	t.Helper()
	got := []any{r.Str(), r.OptStr(), *r.OptStr(), r.Time(), *r.OptTime(), *r.OptVarint(), r.Bool(), r.OptList(), r.OptList(), r.Uvarint(), r.Data()}
	if !r.Done() {
		t.Errorf("Done() = false after reading the whole record (End: %v)", r.End())
	}
	want := []any{"\x00é", (*string)(nil), "", time.UnixMilli(-1).UTC(), time.UnixMilli(1700000000123).UTC(), int64(-1 << 40), true,
		[]string{}, []string{"a", ""}, uint64(300), map[string]json.RawMessage{"a": json.RawMessage(`"x"`), "z": json.RawMessage(`1`)}}
	if err := r.End(); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read %#v, %v; want %#v", got, err, want)
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

func TestRoundTripEverySource(t *testing.T) {
	b := record()
	r := NewReader(b)
	readRecord(t, &r)
	s := NewStringReader(string(b))
	readRecord(t, &s)
	o := NewReader(b)
	buf := make([]byte, 0, len(b))
	o.Own(buf)
	readRecord(t, &o)
	o = NewReader(b)
	o.Own(buf)
	if first := o.Str(); &buf[:2][1] != unsafeData(first) { // after its length byte
		t.Errorf("Own did not read from its buffer: %q", first)
	}
}

func TestMalformed(t *testing.T) {
	good := record()
	cases := map[string][]byte{
		"non-minimal uvarint": {0x81, 0x00},
		"non-minimal varint":  append(AppendStr(nil, "x"), 0, 1, 0x80, 0x00),
		"overflow":            {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"length beyond":       {5, 'a'},
		"bad flag":            append(AppendStr(nil, "x"), 2),
		"trailing bytes":      append(append([]byte{}, good...), 0),
		"data out of order":   append(good[:len(good)-11:len(good)-11], 2, 1, 'b', 1, '1', 1, 'a', 1, '2'),
		"data not JSON":       append(good[:len(good)-11:len(good)-11], 1, 1, 'a', 1, '{'),
		"empty data":          append(good[:len(good)-11:len(good)-11], 0),
	}
	for i := range len(good) {
		cases["truncated at "+string(rune('0'+i%10))+string(rune('a'+i/10))] = good[:i]
	}
	for name, b := range cases {
		r := NewReader(b)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", name, p)
				}
			}()
			_, _, _, _, _, _ = r.Str(), r.OptStr(), r.OptStr(), r.Time(), r.OptTime(), r.OptVarint()
			_, _, _, _, _ = r.Bool(), r.OptList(), r.OptList(), r.Uvarint(), r.Data()
		}()
		if r.Done() {
			t.Errorf("%s (% x): Done() = true", name, b)
		}
		if err := r.End(); !errors.Is(err, errMalformed) {
			t.Errorf("%s (% x): err = %v, want errMalformed", name, b, err)
		}
	}
}

func TestAccountRoundTrip(t *testing.T) {
	for _, a := range []core.Account{
		{UserID: "u", Provider: "p", Type: core.AccountTypeOIDC, ProviderAccountID: "x"},
		{UserID: "u\xff", Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "", AccessToken: ptr(""),
			AuthorizationDetails: []core.AuthorizationDetail{{Type: "t", Locations: []string{}, Privileges: []string{"a"}}, {}},
			ExpiresAt:            ptr(int64(-5)), ExpiresIn: ptr(int64(0)), IDToken: ptr("i"), RefreshToken: ptr("r"), Scope: ptr("s"),
			TokenType: ptr("bearer"), SessionState: ptr("ss")},
		{UserID: "u", AuthorizationDetails: []core.AuthorizationDetail{}},
		{UserID: "u", Provider: core.PasswordProvider, Type: core.AccountTypeCredentials, ProviderAccountID: "u", PasswordHash: ptr("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")},
		{UserID: "u", PasswordHash: ptr("")},
	} {
		b := AppendAccount(nil, &a)
		r := NewReader(b)
		var got core.Account
		r.Account(&got)
		if err := r.End(); err != nil || !reflect.DeepEqual(got, a) {
			t.Errorf("account round trip: %#v, %v; want %#v", got, err, a)
		}
	}
}
