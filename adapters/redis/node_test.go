package redisadapter

import (
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
)

// nodeProc is the interop script's long-lived Node process (see
// conformance/nodeproc); requests are {"method", "args"}.
type nodeProc struct {
	*nodeproc.Proc
	t testing.TB
}

// startNode starts node on script in dir with args; see nodeproc.Start for
// when it skips or fails t. need is a file under dir/node_modules.
func startNode(t testing.TB, dir, script, need string, args ...string) *nodeProc {
	t.Helper()
	p := nodeproc.Start(t, nodeproc.Config{Dir: dir, Script: script, Args: args, Need: []string{need}})
	return &nodeProc{Proc: p, t: t}
}

// send starts a call and returns the channel its reply arrives on.
func (p *nodeProc) send(method string, args ...any) <-chan nodeproc.Reply {
	return p.Send(map[string]any{"method": method, "args": args})
}

// call runs one call and decodes its result into out (when not nil),
// failing the test on an error.
func (p *nodeProc) call(out any, method string, args ...any) {
	p.t.Helper()
	if err := p.Do(map[string]any{"method": method, "args": args}, out); err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
}

// jsDate is a Date on the wire to and from the Node scripts.
type jsDate struct {
	Date string `json:"$date"`
}

func dateOf(t time.Time) jsDate { return jsDate{Date: t.UTC().Format("2006-01-02T15:04:05.000Z")} }

func (d *jsDate) time(t testing.TB) time.Time {
	t.Helper()
	if d == nil {
		t.Fatal("date missing")
	}
	v, err := time.Parse(time.RFC3339Nano, d.Date)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}
