// Package nodeproc runs a long-lived Node.js process for interop tests: a
// script that reads one JSON request per line on stdin and writes one JSON
// reply per line on stdout, in whatever order its calls finish. Go may have
// many calls in flight at once, so that calls into a Node library race with
// calls into authport's.
//
// The wire protocol is deliberately small. Every request is a JSON object
// to which [Proc.Send] adds an integer "id"; every reply is a JSON object
// carrying the same "id" and either "result" (any JSON value) or "error" (a
// string), optionally with a "code" string. Replies to ids nobody waits for
// (for instance id -1 for a line the script could not parse) are dropped.
// The script must exit when its stdin closes.
//
// [Check] and [Start] skip the test when node or the script's npm packages
// are missing, or fail it when AUTHPORT_REQUIRE is "all" or names "npm"
// (see [provision.Required]).
//
// The Node side every Auth.js adapter pairing shares, serve-adapter.mjs,
// ships inside this package: [Start] writes it out for each script and
// names its file: URL in the variable [ServeAdapterEnv], so that a script
// in any module imports it by that name, never by a path into this module:
//
//	const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER)
//
// nodeproc uses only the standard library and core/coretest, and is meant
// for tests.
package nodeproc

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core/coretest"
)

// ServeAdapterEnv is the environment variable in which [Start] gives a
// script the file: URL of serve-adapter.mjs, the JSON-lines loop of the
// Auth.js adapter pairings (see conformance/interop), to import.
const ServeAdapterEnv = "AUTHPORT_SERVE_ADAPTER"

// serveAdapter is serve-adapter.mjs, written out by [Start].
//
//go:embed serve-adapter.mjs
var serveAdapter []byte

// writeServeAdapter writes serve-adapter.mjs into dir and returns its
// file: URL.
func writeServeAdapter(dir string) (string, error) {
	path := filepath.Join(dir, "serve-adapter.mjs")
	if err := os.WriteFile(path, serveAdapter, 0o600); err != nil {
		return "", fmt.Errorf("writing the Node driver: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("the Node driver's path: %w", err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// CallTimeout is how long [Proc.Wait] waits for a reply.
const CallTimeout = time.Minute

// ExitTimeout is how long the cleanup registered by [Start] waits for the
// script to exit after its stdin is closed before it kills it.
const ExitTimeout = 20 * time.Second

// Check returns the path of the node executable. It skips t, or fails it
// when provision.Required("npm") (AUTHPORT_REQUIRE is "all" or names npm),
// when node is not on PATH or any of need, slash-separated paths under
// dir/node_modules such as "@auth/core/jwt.js", does not exist. The message
// tells the developer to run npm ci in dir.
func Check(t testing.TB, dir string, need ...string) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if provision.Required("npm") {
			t.Fatalf("%s (%s=%s)", why, provision.RequireEnv, os.Getenv(provision.RequireEnv))
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed: install Node.js 20+, then run npm ci in " + dir)
	}
	for _, n := range need {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(n))); err != nil {
			missing(n + " is not installed: run npm ci in " + dir)
		}
	}
	return node
}

// Config says which script to run.
type Config struct {
	// Dir is the script's working directory, the one holding node_modules.
	Dir string
	// Script is the script's path, relative to Dir.
	Script string
	// Args are the script's arguments.
	Args []string
	// NodeFlags come before Script on node's command line, such as
	// "--expose-gc".
	NodeFlags []string
	// Need lists slash-separated paths under Dir/node_modules that must
	// exist (see [Check]).
	Need []string
	// Env are more NAME=value entries of the script's environment, after
	// the test's own (such as the file: URL of a suite's Node side that
	// the script imports).
	Env []string
}

// Reply is one reply line of the script.
type Reply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	// Error is the script's error message; nil when the call succeeded.
	Error *string `json:"error"`
	// Code is an optional error code the script reports with Error.
	Code string `json:"code"`
}

// Err returns the reply's error as an [*Error], or nil.
func (r Reply) Err() error {
	if r.Error == nil {
		return nil
	}
	return &Error{Message: *r.Error, Code: r.Code}
}

// Error is an error the script reported, or the reason the process stopped
// answering (its stderr included).
type Error struct {
	Message string
	Code    string
}

// Error returns "node: message", with the code in parentheses if any.
func (e *Error) Error() string {
	if e.Code != "" {
		return "node: " + e.Message + " (" + e.Code + ")"
	}
	return "node: " + e.Message
}

// Proc is one running script. Its methods are safe for concurrent use.
type Proc struct {
	t      testing.TB
	name   string
	stdin  io.WriteCloser
	stderr coretest.SyncBuffer

	mu      sync.Mutex // guards stdin writes, next, pending and dead
	next    int
	pending map[int]chan Reply
	dead    error // why no more replies will come; nil while running
}

// Start checks node and cfg.Need as [Check] does, starts node on
// cfg.Script (with [ServeAdapterEnv] naming the driver it may import) and
// registers a cleanup on t that closes the script's stdin,
// waits up to [ExitTimeout] for it to exit and reports a non-zero exit, a
// kill or the stderr of a script that did not exit as a test error.
func Start(t testing.TB, cfg Config) *Proc {
	t.Helper()
	node := Check(t, cfg.Dir, cfg.Need...)
	args := append(append(append([]string{}, cfg.NodeFlags...), cfg.Script), cfg.Args...)
	driver, err := writeServeAdapter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = cfg.Dir
	cmd.Env = append(append(os.Environ(), ServeAdapterEnv+"="+driver), cfg.Env...)
	p := &Proc{t: t, name: cfg.Script, pending: map[int]chan Reply{}}
	cmd.Stderr = &p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node %s: %v", cfg.Script, err)
	}
	p.stdin = stdin
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.read(stdout)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		exited := make(chan error, 1)
		go func() {
			<-readDone // Wait closes stdout: read it to the end first
			exited <- cmd.Wait()
		}()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("node %s exited with %v; stderr:\n%s", p.name, err, p.stderr.String())
			}
		case <-time.After(ExitTimeout):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("node %s did not exit within %v of its stdin closing; stderr:\n%s", p.name, ExitTimeout, p.stderr.String())
		}
	})
	return p
}

// read delivers the replies on r until it ends or carries a line that is
// not a JSON reply, then fails every pending and later call.
func (p *Proc) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var rep Reply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			p.fail(fmt.Errorf("%s wrote %q, not a JSON reply: %v; stderr:\n%s", p.name, sc.Bytes(), err, p.stderr.String()))
			_, _ = io.Copy(io.Discard, r) // let the process finish writing
			return
		}
		p.mu.Lock()
		ch := p.pending[rep.ID]
		delete(p.pending, rep.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
	p.fail(fmt.Errorf("%s ended (read error: %v); stderr:\n%s", p.name, sc.Err(), p.stderr.String()))
}

// fail ends every pending and later call with err.
func (p *Proc) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead == nil {
		p.dead = err
	}
	for id, ch := range p.pending {
		ch <- errReply(id, p.dead)
		delete(p.pending, id)
	}
}

func errReply(id int, err error) Reply {
	msg := err.Error()
	return Reply{ID: id, Error: &msg}
}

// Send writes req as one line, with its "id" set to a fresh number, and
// returns the channel its reply arrives on. Send does not wait for the
// reply; a request that cannot be written, or sent after the process
// ended, gets an error reply at once.
func (p *Proc) Send(req map[string]any) <-chan Reply {
	ch := make(chan Reply, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := p.next
	if p.dead != nil {
		ch <- errReply(id, p.dead)
		return ch
	}
	msg := make(map[string]any, len(req)+1)
	for k, v := range req {
		msg[k] = v
	}
	msg["id"] = id
	line, err := json.Marshal(msg)
	if err != nil {
		ch <- errReply(id, fmt.Errorf("encoding the request: %w", err))
		return ch
	}
	p.pending[id] = ch
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		delete(p.pending, id)
		ch <- errReply(id, fmt.Errorf("writing to %s: %w; stderr:\n%s", p.name, err, p.stderr.String()))
	}
	return ch
}

// Wait waits up to [CallTimeout] for a reply from ch and returns its
// result, or its error as an [*Error].
func (p *Proc) Wait(ch <-chan Reply) (json.RawMessage, error) {
	select {
	case rep := <-ch:
		if err := rep.Err(); err != nil {
			return nil, err
		}
		return rep.Result, nil
	case <-time.After(CallTimeout):
		return nil, &Error{Message: fmt.Sprintf("%s did not answer within %v; stderr:\n%s", p.name, CallTimeout, p.stderr.String())}
	}
}

// Do sends req, waits for its reply and decodes the result into out when
// out is not nil (a JSON null leaves a pointer out nil).
func (p *Proc) Do(req map[string]any, out any) error {
	res, err := p.Wait(p.Send(req))
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			return fmt.Errorf("decoding %s: %w", res, err)
		}
	}
	return nil
}

// Stderr returns what the script wrote to stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

// The calls below speak the protocol of serve-adapter.mjs, the Node side
// the adapters' interop scripts share: a request is {"method", "args"} and
// a Date travels as {"$date": "<ISO 8601>"}.

// SendCall sends a call of the script's method with args, as [Proc.Send].
func (p *Proc) SendCall(method string, args ...any) <-chan Reply {
	return p.Send(map[string]any{"method": method, "args": args})
}

// Call runs the script's method with args and decodes its result into out
// (when not nil). An error fails the test that [Start] was given, so Call
// belongs in that test's goroutine.
func (p *Proc) Call(out any, method string, args ...any) {
	p.t.Helper()
	if err := p.Do(map[string]any{"method": method, "args": args}, out); err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
}

// Date is a JavaScript Date on the wire.
type Date struct {
	Date string `json:"$date"`
}

// DateOf returns t as a Date, in milliseconds as JavaScript keeps it.
func DateOf(t time.Time) Date { return Date{Date: t.UTC().Format("2006-01-02T15:04:05.000Z")} }

// Time returns d as a UTC time, failing t when d is nil or malformed.
func (d *Date) Time(t testing.TB) time.Time {
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
