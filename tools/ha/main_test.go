package main

import (
	"strings"
	"testing"
)

func TestPorts(t *testing.T) {
	if got, err := ports("1, 2,3", 3); err != nil || len(got) != 3 || got[1] != 2 {
		t.Fatalf("ports = %v, %v", got, err)
	}
	for _, bad := range []string{"1,2", "1,2,3,4", "1,x,3", "0,1,2", "1,2,70000", ""} {
		if _, err := ports(bad, 3); err == nil {
			t.Errorf("ports(%q) accepted", bad)
		}
	}
}

// The URL is the form go-redis's ParseFailoverURL reads: the first
// sentinel as the address, the others as addr=, the master's name.
func TestSentinelURL(t *testing.T) {
	s := sentinelSetup{name: "m", sentinels: []int{1, 2, 3}}
	if got, want := s.url(), "redis://127.0.0.1:1/0?master_name=m&addr=127.0.0.1:2&addr=127.0.0.1:3"; got != want {
		t.Fatalf("url = %q, want %q", got, want)
	}
}

func TestFields(t *testing.T) {
	f := fields(strings.Join([]string{"name", "m", "ip", "127.0.0.1", "port", "6390", "flags", "master", "odd"}, "\n"))
	if f["ip"] != "127.0.0.1" || f["port"] != "6390" || f["flags"] != "master" || len(f) != 4 {
		t.Fatalf("fields = %v", f)
	}
}

func TestSortHosts(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://postgres@127.0.0.1:5442,127.0.0.1:5441/test?target_session_attrs=read-write": "postgres://postgres@127.0.0.1:5441,127.0.0.1:5442/test?target_session_attrs=read-write",
		"postgres://b:2,a:1/test": "postgres://a:1,b:2/test",
		"postgres://b:2,a:1?x=y":  "postgres://a:1,b:2?x=y",
		"postgres://u@b:2,a:1":    "postgres://u@a:1,b:2",
		"not a url":               "not a url",
	} {
		if got := sortHosts(in); got != want {
			t.Errorf("sortHosts(%q) = %q, want %q", in, got, want)
		}
	}
}
