package handler

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONStringMatchesEncodingJSON checks appendJSONString against
// json.Marshal on every byte alone, inside ASCII text and in UTF-8
// sequences, valid or not.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	var cases []string
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "Ada "+string([]byte{byte(c)})+" Lovelace")
	}
	cases = append(cases, "", "u7919@bench.example", "https://bench.example/u7919.png", "Zoë", "a\u2028b", "\xff\xfe", "日本語", `a"b\c<d>e&f`)
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("Ada Lovelace")
	f.Add("a\u2028<b>\x00")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal %s", s, got, want)
		}
	})
}
