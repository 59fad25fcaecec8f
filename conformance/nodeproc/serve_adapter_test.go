package nodeproc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
)

// TestServeAdapter runs serve-adapter.mjs, the Node side the adapters'
// interop scripts share, on a plain object standing in for an adapter. The
// script finds it as theirs do: through the variable Start sets, in a
// directory that holds no copy of it.
func TestServeAdapter(t *testing.T) {
	dir := t.TempDir()
	script := `const { serveAdapter } = await import(process.env.` + nodeproc.ServeAdapterEnv + `)
serveAdapter({
  async add(a, b) { return a + b },
  async later(d) { return { at: new Date(d.getTime() + 1000), list: [d] } },
  async nothing() {},
  async boom() { throw new Error("boom") },
}, { close: async () => process.stderr.write("closed\n") })
`
	if err := os.WriteFile(filepath.Join(dir, "fake.mjs"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	p := nodeproc.Start(t, nodeproc.Config{Dir: dir, Script: "fake.mjs"})

	var sum int
	if err := p.Do(map[string]any{"method": "add", "args": []int{2, 3}}, &sum); err != nil || sum != 5 {
		t.Errorf("add: %d, %v", sum, err)
	}
	var got struct {
		At struct {
			Date string `json:"$date"`
		}
		List []struct {
			Date string `json:"$date"`
		}
	}
	arg := map[string]string{"$date": "2026-01-02T03:04:05.678Z"}
	if err := p.Do(map[string]any{"method": "later", "args": []any{arg}}, &got); err != nil {
		t.Fatal(err)
	}
	if got.At.Date != "2026-01-02T03:04:06.678Z" || len(got.List) != 1 || got.List[0].Date != arg["$date"] {
		t.Errorf("dates did not round-trip: %+v", got)
	}
	// The same through Call, DateOf and Date.Time.
	when := time.Date(2026, 5, 6, 7, 8, 9, 123_456_789, time.UTC)
	var typed struct {
		At   *nodeproc.Date
		List []nodeproc.Date
	}
	p.Call(&typed, "later", nodeproc.DateOf(when))
	if want := when.Truncate(time.Millisecond); !typed.At.Time(t).Equal(want.Add(time.Second)) || len(typed.List) != 1 || !typed.List[0].Time(t).Equal(want) {
		t.Errorf("Call later(%v) = %+v", when, typed)
	}
	if _, err := p.Wait(p.SendCall("add", 1, 2)); err != nil {
		t.Errorf("SendCall: %v", err)
	}
	var res json.RawMessage
	if err := p.Do(map[string]any{"method": "nothing"}, &res); err != nil || string(res) != "null" {
		t.Errorf("nothing: %s, %v", res, err)
	}
	for method, want := range map[string]string{"boom": "boom", "nope": "no method nope"} {
		if err := p.Do(map[string]any{"method": method}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", method, err, want)
		}
	}
}
