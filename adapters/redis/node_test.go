package redisadapter

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// nodeProc is one long-lived Node process running an interop script: Go
// sends JSON lines and may have many calls in flight, so that calls into
// the Node adapter race with calls into authport's.
type nodeProc struct {
	t       testing.TB
	stdin   io.WriteCloser
	mu      sync.Mutex // guards stdin writes, next and pending
	next    int
	pending map[int]chan nodeReply
	done    chan struct{}
	stderr  strings.Builder
}

type nodeReply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// requireNPM reports whether AUTHPORT_REQUIRE makes a missing Node setup a
// failure (all, or a list naming npm).
func requireNPM() bool {
	for _, s := range strings.Split(os.Getenv("AUTHPORT_REQUIRE"), ",") {
		if s = strings.TrimSpace(s); s == "all" || s == "npm" {
			return true
		}
	}
	return false
}

// startNode starts node on script in dir with args. It skips t (or fails
// it under AUTHPORT_REQUIRE=all or npm) when Node or dir/node_modules/need
// is missing, and stops the process when t ends.
func startNode(t testing.TB, dir, script, need string, args ...string) *nodeProc {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if requireNPM() {
			t.Fatalf("%s (AUTHPORT_REQUIRE=%s)", why, os.Getenv("AUTHPORT_REQUIRE"))
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed: install Node.js 20+, then run npm ci in " + dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", need)); err != nil {
		missing(need + " is not installed: run npm ci in " + dir)
	}
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Dir = dir
	p := &nodeProc{t: t, pending: map[int]chan nodeReply{}, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &p.mu, b: &p.stderr}
	p.stdin, err = cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node %s: %v", script, err)
	}
	go p.read(stdout)
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (p *nodeProc) read(r io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rep nodeReply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			continue
		}
		p.mu.Lock()
		ch := p.pending[rep.ID]
		delete(p.pending, rep.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ch := range p.pending {
		ch <- nodeReply{ID: id, Error: "node exited: " + p.stderr.String()}
		delete(p.pending, id)
	}
}

// send starts a call and returns the channel its reply arrives on.
func (p *nodeProc) send(method string, args ...any) <-chan nodeReply {
	ch := make(chan nodeReply, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := p.next
	line, err := json.Marshal(map[string]any{"id": id, "method": method, "args": args})
	if err != nil {
		ch <- nodeReply{ID: id, Error: err.Error()}
		return ch
	}
	select {
	case <-p.done:
		ch <- nodeReply{ID: id, Error: "node exited: " + p.stderr.String()}
		return ch
	default:
	}
	p.pending[id] = ch
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		delete(p.pending, id)
		ch <- nodeReply{ID: id, Error: err.Error()}
	}
	return ch
}

// wait waits for a reply, at most a minute.
func (p *nodeProc) wait(ch <-chan nodeReply) (json.RawMessage, error) {
	select {
	case rep := <-ch:
		if rep.Error != "" {
			return nil, fmt.Errorf("node: %s", rep.Error)
		}
		return rep.Result, nil
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("node: no reply within a minute")
	}
}

// call runs one call and decodes its result into out (when not nil),
// failing the test on an error.
func (p *nodeProc) call(out any, method string, args ...any) {
	p.t.Helper()
	res, err := p.wait(p.send(method, args...))
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			p.t.Fatalf("%s: decoding %s: %v", method, res, err)
		}
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
