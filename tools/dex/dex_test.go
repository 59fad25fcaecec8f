package dex

import (
	"debug/buildinfo"
	"os"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestPins checks the pins themselves: dex's command is a tool of this
// module, and dex and its API module are required at versions of one commit.
func TestPins(t *testing.T) {
	f := readGoMod(t)
	var tool bool
	for _, tl := range f.Tool {
		tool = tool || tl.Path == "github.com/dexidp/dex/cmd/dex"
	}
	if !tool {
		t.Error("go.mod has no `tool github.com/dexidp/dex/cmd/dex`: the build in scripts/services.sh needs it")
	}
	dex, api := required(f, "github.com/dexidp/dex"), required(f, "github.com/dexidp/dex/api/v2")
	if dex == "" || api == "" {
		t.Fatalf("go.mod requires github.com/dexidp/dex %q and github.com/dexidp/dex/api/v2 %q; want both", dex, api)
	}
	// A pseudo-version ends in -TIMESTAMP-COMMIT; dex's server and its API
	// must come from the same commit, or the server does not compile.
	if commitOf(dex) != commitOf(api) {
		t.Errorf("dex %s and its API %s are from different commits", dex, api)
	}
}

// TestBinaryMatchesPins checks that the binary AUTHPORT_DEX_BIN names is
// dex built from the versions go.mod pins now: a stale cached build, or
// another dex, fails here.
func TestBinaryMatchesPins(t *testing.T) {
	bin := os.Getenv("AUTHPORT_DEX_BIN")
	if bin == "" {
		if requires(os.Getenv("AUTHPORT_REQUIRE"), "dex") {
			t.Fatal("AUTHPORT_DEX_BIN is not set, and AUTHPORT_REQUIRE requires dex: run eval \"$(scripts/services.sh)\"")
		}
		t.Skip("AUTHPORT_DEX_BIN is not set: run eval \"$(scripts/services.sh)\" to build dex")
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatalf("AUTHPORT_DEX_BIN=%s: %v", bin, err)
	}
	// Built here, dex's command is the binary's main package and dex's
	// module its main module, at the pinned version.
	if info.Path != "github.com/dexidp/dex/cmd/dex" {
		t.Fatalf("AUTHPORT_DEX_BIN=%s is the command %s, want github.com/dexidp/dex/cmd/dex", bin, info.Path)
	}
	f := readGoMod(t)
	built := map[string]string{info.Main.Path: info.Main.Version}
	for _, d := range info.Deps {
		built[d.Path] = d.Version
		if d.Replace != nil {
			t.Errorf("AUTHPORT_DEX_BIN=%s: %s was replaced by %s", bin, d.Path, d.Replace.Path)
		}
	}
	for _, path := range []string{"github.com/dexidp/dex", "github.com/dexidp/dex/api/v2"} {
		if want := required(f, path); built[path] != want {
			t.Errorf("AUTHPORT_DEX_BIN=%s has %s %q, go.mod pins %s: rebuild it with scripts/services.sh", bin, path, built[path], want)
		}
	}
}

func readGoMod(t *testing.T) *modfile.File {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// required returns the version go.mod requires of path, or "".
func required(f *modfile.File, path string) string {
	for _, r := range f.Require {
		if r.Mod.Path == path {
			return r.Mod.Version
		}
	}
	return ""
}

// commitOf returns the commit hash ending a pseudo-version, or the version
// itself.
func commitOf(version string) string {
	return version[strings.LastIndexByte(version, '-')+1:]
}

// requires reports whether the AUTHPORT_REQUIRE value list (a comma list of
// names, or all) names name.
func requires(list, name string) bool {
	for n := range strings.SplitSeq(list, ",") {
		if n = strings.ToLower(strings.TrimSpace(n)); n == name || n == "all" {
			return true
		}
	}
	return false
}
