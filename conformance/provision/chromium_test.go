package provision

import (
	"os"
	"path/filepath"
	"testing"
)

func TestChromiumBinary(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "notexec")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		vars            map[string]string
		want            string
		skipped, failed string
	}{
		{name: "set", vars: map[string]string{ChromiumBinEnv: exe}, want: exe},
		{name: "set and required", vars: map[string]string{ChromiumBinEnv: exe, RequireEnv: "all"}, want: exe},
		{name: "unset skips", skipped: "no Chromium: set AUTHPORT_CHROMIUM_BIN"},
		{name: "unset, other required, skips", vars: map[string]string{RequireEnv: "postgres,dex"}, skipped: "no Chromium"},
		{name: "unset, chromium required, fails", vars: map[string]string{RequireEnv: "redis, chromium"}, failed: "AUTHPORT_REQUIRE requires chromium"},
		{name: "unset, all required, fails", vars: map[string]string{RequireEnv: "all"}, failed: "no Chromium"},
		{name: "misspelt requirement fails", vars: map[string]string{RequireEnv: "chromum"}, failed: "unknown backends chromum"},
		{name: "missing file fails", vars: map[string]string{ChromiumBinEnv: exe + ".gone"}, failed: "cannot be run"},
		{name: "not executable fails", vars: map[string]string{ChromiumBinEnv: plain}, failed: "not an executable"},
		{name: "directory fails", vars: map[string]string{ChromiumBinEnv: t.TempDir()}, failed: "not an executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTB{}
			got := chromiumBinary(f, env(tt.vars))
			if got != tt.want || !containsOrEmpty(f.skipped, tt.skipped) || !containsOrEmpty(f.failed, tt.failed) {
				t.Errorf("chromiumBinary = %q, skipped %q, failed %q; want %q, skipped ~%q, failed ~%q",
					got, f.skipped, f.failed, tt.want, tt.skipped, tt.failed)
			}
		})
	}
	if !requiredIn("chromium", BackendChromium) || len(unknownRequired("chromium,dex")) != 0 {
		t.Error("chromium is not a known AUTHPORT_REQUIRE name")
	}
}
