package provision

import (
	"os"
	"testing"
)

// BackendChromium is the AUTHPORT_REQUIRE name of Chromium, the browser the
// end-to-end tests drive (see [Chromium]).
const BackendChromium = "chromium"

// ChromiumBinEnv is the environment variable naming the Chromium binary
// [Chromium] returns. scripts/services.sh installs Debian's chromium when
// /usr/bin/chromium is missing and prints this variable.
const ChromiumBinEnv = "AUTHPORT_CHROMIUM_BIN"

// Chromium returns the path of the Chromium (or Chrome) binary named by
// AUTHPORT_CHROMIUM_BIN, for a test to drive headless over the DevTools
// protocol. Without the variable it skips t, or fails it when
// [Required]("chromium"); a variable naming something that is not an
// executable file fails t.
func Chromium(t testing.TB) string {
	t.Helper()
	return chromiumBinary(t, os.Getenv)
}

// chromiumBinary implements [Chromium] with the environment read through
// getenv. It returns "" only after t.Skip or t.Fatal.
func chromiumBinary(t testing.TB, getenv func(string) string) string {
	t.Helper()
	return executableFrom(t, BackendChromium, ChromiumBinEnv, "a Chromium binary", getenv)
}
