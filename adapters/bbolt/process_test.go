package bboltadapter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authport/authport/core"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The tests below re-run this test binary as a child process, selected by
// this environment variable ("hold:<path>" or "write:<path>:<prefix>").
const childEnv = "AUTHPORT_BBOLT_TEST_CHILD"

// TestHelperProcess is the child's body; without childEnv it does nothing.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	parts := strings.SplitN(mode, ":", 3)
	switch {
	case parts[0] == "hold" && len(parts) == 2:
		a, err := Open(context.Background(), parts[1])
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin) // hold the lock until stdin closes or we are killed
		_ = a.Close()
		os.Exit(0)
	case parts[0] == "write" && len(parts) == 3:
		childWrite(parts[1], parts[2])
	default:
		fmt.Println("bad child mode", mode)
		os.Exit(2)
	}
}

// childWrite writes with every kind of operation in a loop until killed.
func childWrite(path, prefix string) {
	a, err := Open(context.Background(), path, WithLockTimeout(10*time.Second))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	fail := func(err error) {
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
	}
	big := strings.Repeat("x", 3000) // records that span more than a few per page
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-u%d", prefix, i)
		u := core.User{ID: id, Email: id + "@e", Username: "n-" + id, Name: &big}
		if i%2 == 1 { // every other user without an e-mail address
			u.Email = ""
		}
		_, err := a.CreateUser(ctx, u)
		fail(err)
		if i%3 == 2 { // a rename, and the address removed or added
			_, err = a.UpdateUser(ctx, core.UserUpdate{ID: id, Username: core.Set("r-" + id), Email: core.Set(strings.TrimSuffix(id+"@e", u.Email))})
			fail(err)
		}
		_, err = a.LinkAccount(ctx, core.Account{UserID: id, Provider: core.PasswordProvider, ProviderAccountID: id, Type: core.AccountTypeCredentials, PasswordHash: &big})
		fail(err)
		_, err = a.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: id}, big, id)
		fail(err)
		_, err = a.LinkAccount(ctx, core.Account{UserID: id, Provider: "p", ProviderAccountID: id, Type: core.AccountTypeOAuth, AccessToken: &big})
		fail(err)
		_, err = a.CreateSession(ctx, core.Session{SessionToken: id + "-s", UserID: id, Expires: time.Now().Add(time.Duration(i%3-1) * time.Hour),
			CreatedAt: time.Now(), IPAddress: "2001:db8::1", UserAgent: big})
		fail(err)
		if i%4 == 1 { // a second session, then "sign out my other devices"
			_, err = a.CreateSession(ctx, core.Session{SessionToken: id + "-s2", UserID: id, Expires: time.Now().Add(time.Hour)})
			fail(err)
			_, err = a.DeleteSessionsByUserID(ctx, id, id+"-s")
			fail(err)
		}
		_, err = a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: id + "-c", CredentialPublicKey: big, UserID: id, ProviderAccountID: id})
		fail(err)
		f, err := a.CreateFactor(ctx, core.Factor{ID: id + "-f", UserID: id, Type: core.FactorTOTP, Secret: []byte(big), CreatedAt: time.Now()})
		fail(err)
		_, err = a.SwapFactor(ctx, *f, core.Factor{Secret: []byte(id), Step: int64(i) + 1, LastUsedAt: time.Now()})
		fail(err)
		if i%5 == 4 { // a second factor, removed
			_, err = a.CreateFactor(ctx, core.Factor{ID: id + "-r", UserID: id, Type: core.FactorRecoveryCodes, CreatedAt: time.Now()})
			fail(err)
			_, err = a.DeleteFactor(ctx, id, id+"-r")
			fail(err)
		}
		_, err = a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: id, Token: "t", Expires: time.Now().Add(time.Hour)})
		fail(err)
		_, err = a.UpdateSession(ctx, core.SessionUpdate{SessionToken: id + "-s", Expires: core.Set(time.Now().Add(2 * time.Hour))})
		fail(err)
		if i%2 == 0 {
			_, err = a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: id, Token: "t"})
			fail(err)
		}
		if i%3 == 0 && i > 0 {
			_, err = a.DeleteUser(ctx, fmt.Sprintf("%s-u%d", prefix, i-1))
			fail(err)
		}
		if i%10 == 0 {
			_, err = a.PurgeExpired(ctx)
			fail(err)
		}
		if i == 20 {
			fmt.Println("ready")
		}
	}
}

// startChild runs the test binary as a child in mode and returns it with
// its stdout lines; the child is killed at cleanup.
func startChild(t *testing.T, mode string) (*exec.Cmd, *bufio.Scanner, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewScanner(stdout), stdin
}

// waitLine waits for the child to print want, failing on anything else.
func waitLine(t *testing.T, sc *bufio.Scanner, want string) {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if l := sc.Text(); l == want || strings.HasPrefix(l, "error") || strings.HasPrefix(l, "bad") {
				got <- l
				return
			}
		}
		got <- "child exited: " + fmt.Sprint(sc.Err())
	}()
	select {
	case l := <-got:
		if l != want {
			t.Fatalf("child said %q, want %q", l, want)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("child did not say %q", want)
	}
}

func TestOpenLockedFileTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.db")
	check := func(t *testing.T) {
		start := time.Now()
		a, err := Open(context.Background(), path, WithLockTimeout(300*time.Millisecond))
		took := time.Since(start)
		if err == nil {
			_ = a.Close()
			t.Fatal("second Open of a locked file succeeded")
		}
		if !errors.Is(err, ErrLocked) || !errors.Is(err, berrors.ErrTimeout) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open of a locked file = %v; want ErrLocked naming the file", err)
		}
		// bbolt retries every 50ms and gives up one retry early.
		if took < 200*time.Millisecond || took > 10*time.Second {
			t.Errorf("Open of a locked file gave up after %v, want about the 300ms timeout", took)
		}
	}

	// bbolt's flock(2) lock belongs to the open file description, so a
	// second Open in this process conflicts with the first just as
	// another process would.
	t.Run("same_process", func(t *testing.T) {
		a, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		check(t)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("other_process", func(t *testing.T) {
		cmd, sc, stdin := startChild(t, "hold:"+path)
		waitLine(t, sc, "locked")
		check(t)
		// Once the holder dies (here: killed), the lock is free.
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		a, err := Open(context.Background(), path, WithLockTimeout(5*time.Second))
		if err != nil {
			t.Fatalf("Open after the holder died: %v", err)
		}
		_ = a.Close()
	})
}

// TestCrashSafety kills (SIGKILL) a child process in the middle of a write
// loop, several times over the same file, and checks after each kill that
// the file opens, bbolt's own page check passes, every record decodes and
// the adapter's consistency check passes.
func TestCrashSafety(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.db")
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	var users int
	for round := range rounds {
		cmd, sc, _ := startChild(t, fmt.Sprintf("write:%s:r%d", path, round))
		waitLine(t, sc, "ready")
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("round %d: child ended with %v, want killed by a signal", round, err)
		}

		a, raw := func() (*Adapter, rawView) {
			a, err := Open(context.Background(), path, WithLockTimeout(5*time.Second))
			if err != nil {
				t.Fatalf("round %d: reopen after kill: %v", round, err)
			}
			return a, rawView{db: a.DB(), root: a.root, check: a.CheckConsistency}
		}()
		ctx := context.Background()
		if err := a.DB().View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		}); err != nil {
			t.Errorf("round %d: bbolt page check: %v", round, err)
		}
		if err := a.CheckConsistency(ctx); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		us, err := raw.Users(ctx)
		if err != nil {
			t.Errorf("round %d: users: %v", round, err)
		}
		for _, get := range []func(context.Context) error{
			func(ctx context.Context) error { _, err := raw.Accounts(ctx); return err },
			func(ctx context.Context) error { _, err := raw.Sessions(ctx); return err },
			func(ctx context.Context) error { _, err := raw.VerificationTokens(ctx); return err },
			func(ctx context.Context) error { _, err := raw.Authenticators(ctx); return err },
			func(ctx context.Context) error { _, err := raw.Factors(ctx); return err },
		} {
			if err := get(ctx); err != nil {
				t.Errorf("round %d: a record does not decode: %v", round, err)
			}
		}
		if len(us) <= users {
			t.Errorf("round %d: %d users after the kill, %d before: the child wrote nothing that survived", round, len(us), users)
		}
		users = len(us)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d users stored, consistent", round, users)
	}
}

// A path in a directory that does not exist says so, at once, and does not
// blame a lock.
func TestOpenMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	start := time.Now()
	_, err := Open(context.Background(), filepath.Join(dir, "auth.db"), WithLockTimeout(5*time.Second))
	if err == nil || !strings.Contains(err.Error(), "the directory "+dir+" does not exist") || errors.Is(err, ErrLocked) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open in a missing directory: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}
