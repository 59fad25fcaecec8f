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
			switch k % 10 {
			case 0:
				out = AppendStr(out, r.Str())
			case 1:
				out = AppendOptStr(out, r.OptStr())
			case 2:
				out = AppendTime(out, r.Time())
			case 3:
				out = AppendOptTime(out, r.OptTime())
			case 4:
				out = AppendOptVarint(out, r.OptVarint())
			case 5:
				out = AppendBool(out, r.Bool())
			case 6:
				out = AppendOptList(out, r.OptList())
			case 7:
				out = AppendUvarint(out, r.Uvarint())
			case 8:
				out = AppendData(out, r.Data())
			case 9:
				var a core.Account
				r.Account(&a)
				out = AppendAccount(out, &a)
			}
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
