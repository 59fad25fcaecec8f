package recordcodec

import (
	"bytes"
	"testing"

	"github.com/authport/authport/core"
)

// FuzzReader reads arbitrary bytes as a sequence of fields chosen by
// kinds (one field kind per byte): no input makes the Reader panic, and a
// sequence that reads without error and to the end was canonical, so
// appending the values read gives back the same bytes (every record has
// exactly one encoding).
func FuzzReader(f *testing.F) {
	f.Add(record(), []byte{0, 1, 1, 2, 3, 4, 5, 6, 6, 7, 8})
	f.Add(AppendAccount(nil, &core.Account{UserID: "u", Provider: "p", Type: "oauth", ProviderAccountID: "1"}), []byte{9})
	f.Add([]byte{0x80, 0x00}, []byte{7})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, []byte{3})
	f.Fuzz(func(t *testing.T, data, kinds []byte) {
		r := NewReader(data)
		if len(kinds)%2 == 1 {
			r.Own(nil)
		}
		var out []byte
		for _, k := range kinds {
			out = fuzzKinds[int(k)%len(fuzzKinds)](out, &r)
			if r.Err() != nil {
				return
			}
		}
		if r.End() != nil {
			return
		}
		if !bytes.Equal(out, data) {
			t.Errorf("read %x cleanly as kinds %v, but its values append as %x", data, kinds, out)
		}
	})
}

// fuzzKinds are the field kinds FuzzReader reads, by kind byte: each
// reads one field and appends the value read.
var fuzzKinds = [...]func(out []byte, r *Reader) []byte{
	reread((*Reader).Str, AppendStr),
	reread((*Reader).OptStr, AppendOptStr),
	reread((*Reader).Time, AppendTime),
	reread((*Reader).OptTime, AppendOptTime),
	reread((*Reader).OptVarint, AppendOptVarint),
	reread((*Reader).Bool, AppendBool),
	reread((*Reader).OptList, AppendOptList),
	reread((*Reader).Uvarint, AppendUvarint),
	reread((*Reader).Data, AppendData),
	reread(func(r *Reader) *core.Account {
		var a core.Account
		r.Account(&a)
		return &a
	}, AppendAccount),
}

// reread pairs a field's read with its append: the value read from r is
// appended to out.
func reread[T any](read func(*Reader) T, appendTo func([]byte, T) []byte) func(out []byte, r *Reader) []byte {
	return func(out []byte, r *Reader) []byte { return appendTo(out, read(r)) }
}
