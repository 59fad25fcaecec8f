package password

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core"
)

// testParams are small enough for tests to hash quickly; they are not for
// production.
var testParams = Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

func newTestHasher(t testing.TB, p Argon2idParams, opts ...Argon2idOption) *Argon2id {
	t.Helper()
	a, err := NewArgon2id(p, opts...)
	if err != nil {
		t.Fatalf("NewArgon2id(%+v): %v", p, err)
	}
	return a
}

// phcFromHex writes a PHC string for a raw key of the reference vectors.
func phcFromHex(m, t uint32, p uint8, salt, keyHex string) string {
	key, err := hex.DecodeString(keyHex)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p,
		base64.RawStdEncoding.EncodeToString([]byte(salt)), base64.RawStdEncoding.EncodeToString(key))
}

// TestArgon2idKnownAnswers verifies hashes that other Argon2
// implementations wrote, so that a hash stored by this package is the
// standard one and not merely self-consistent.
//
// RFC 9106 §5.3's Argon2id vector uses a secret key and associated data,
// which golang.org/x/crypto/argon2's API does not take; x/crypto checks
// that vector in its own tests (TestArgon2id, deriveKey). The vectors here
// have neither, as every password hash does.
func TestArgon2idKnownAnswers(t *testing.T) {
	cases := []struct {
		source, hash, password string
	}{
		// The reference implementation's CLI (P-H-C/phc-winner-argon2,
		// Debian package argon2 0~20171227-0.3+deb12u1), run as
		//   echo -n password | argon2 somesalt -id -t 2 -m 16 -p 1 -l 32 -e
		// This string is also the argon2id example of the reference
		// implementation's own test suite (src/test.c).
		{"argon2 CLI: -id -t 2 -m 16 -p 1 -l 32", "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc", "password"},
		//   echo -n "correct horse battery staple" | argon2 saltsaltsaltsalt -id -t 3 -m 12 -p 4 -l 32 -e
		{"argon2 CLI: -id -t 3 -m 12 -p 4 -l 32", "$argon2id$v=19$m=4096,t=3,p=4$c2FsdHNhbHRzYWx0c2FsdA$/wUZfCaBgMlHCIJKub37VavPGcne93vTllmvfakpqcs", "correct horse battery staple"},
		//   printf 'p\xc3\xa4ssw\xc3\xb6rd' | argon2 'NaCl-and-pepper!' -id -t 1 -m 10 -p 2 -l 16 -e
		{"argon2 CLI: UTF-8 password, -t 1 -m 10 -p 2 -l 16", "$argon2id$v=19$m=1024,t=1,p=2$TmFDbC1hbmQtcGVwcGVyIQ$kupbPzJdYsfPanxlStO3Kg", "pässwörd"},
		// golang.org/x/crypto/argon2's testVectors (argon2_test.go),
		// "generated with the CLI of phc-winner-argon2": password
		// "password", salt "somesalt", 24-byte keys.
		{"x/crypto vector t=1 m=64 p=1", phcFromHex(64, 1, 1, "somesalt", "655ad15eac652dc59f7170a7332bf49b8469be1fdb9c28bb"), "password"},
		{"x/crypto vector t=3 m=256 p=2", phcFromHex(256, 3, 2, "somesalt", "4668d30ac4187e6878eedeacf0fd83c5a0a30db2cc16ef0b"), "password"},
		{"x/crypto vector t=4 m=4096 p=4", phcFromHex(4096, 4, 4, "somesalt", "145db9733a9f4ee43edf33c509be96b934d505a4efb33c5a"), "password"},
	}
	ctx := context.Background()
	a := newTestHasher(t, testParams)
	for _, c := range cases {
		t.Run(c.source, func(t *testing.T) {
			ok, rehash, err := a.Verify(ctx, c.hash, c.password)
			if err != nil || !ok {
				t.Fatalf("Verify(right password) = %v, %v, %v; want true", ok, rehash, err)
			}
			if !rehash {
				t.Errorf("Verify of a hash with other parameters than %+v: rehash = false, want true", testParams)
			}
			ok, rehash, err = a.Verify(ctx, c.hash, c.password+"x")
			if err != nil || ok || rehash {
				t.Errorf("Verify(wrong password) = %v, %v, %v; want false, false, nil", ok, rehash, err)
			}
		})
	}
	// Hash with the first vector's parameters and salt gives the first
	// vector's string: what Hash writes, others read.
	p := Argon2idParams{Memory: 65536, Iterations: 2, Parallelism: 1, SaltLength: 8, KeyLength: 32}
	key, err := newTestHasher(t, p).derive(ctx, "password", []byte("somesalt"), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := encodePHC(p, []byte("somesalt"), key); got != cases[0].hash {
		t.Errorf("encodePHC = %s, want %s", got, cases[0].hash)
	}
}

var phcShape = regexp.MustCompile(`^\$argon2id\$v=19\$m=64,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)

func TestArgon2idHashAndVerify(t *testing.T) {
	ctx := context.Background()
	a := newTestHasher(t, testParams)
	h1, err := a.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := a.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !phcShape.MatchString(h1) {
		t.Errorf("Hash = %q, not the PHC form $argon2id$v=19$m=64,t=1,p=1$<22>$<43>", h1)
	}
	if h1 == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	for _, h := range []string{h1, h2} {
		if ok, rehash, err := a.Verify(ctx, h, "correct horse"); !ok || rehash || err != nil {
			t.Errorf("Verify(own hash, right password) = %v, %v, %v; want true, false, nil", ok, rehash, err)
		}
	}
	for _, wrong := range []string{"", "correct hors", "correct horsf", "Correct horse", "correct horse "} {
		if ok, rehash, err := a.Verify(ctx, h1, wrong); ok || rehash || err != nil {
			t.Errorf("Verify(own hash, %q) = %v, %v, %v; want false, false, nil", wrong, ok, rehash, err)
		}
	}
	if got := a.Params(); got != testParams {
		t.Errorf("Params() = %+v, want %+v", got, testParams)
	}
}

// TestArgon2idRehash: a hash whose parameters differ from the hasher's in
// any one of them verifies and asks to be re-hashed; after re-hashing it no
// longer does.
func TestArgon2idRehash(t *testing.T) {
	ctx := context.Background()
	current := newTestHasher(t, testParams)
	others := map[string]Argon2idParams{}
	for name, change := range map[string]func(*Argon2idParams){
		"memory":      func(p *Argon2idParams) { p.Memory = 128 },
		"iterations":  func(p *Argon2idParams) { p.Iterations = 2 },
		"parallelism": func(p *Argon2idParams) { p.Parallelism = 2 },
		"salt length": func(p *Argon2idParams) { p.SaltLength = 24 },
		"key length":  func(p *Argon2idParams) { p.KeyLength = 16 },
	} {
		p := testParams
		change(&p)
		others[name] = p
	}
	for name, p := range others {
		t.Run(name, func(t *testing.T) {
			old, err := newTestHasher(t, p).Hash(ctx, "tr0ub4dor&3")
			if err != nil {
				t.Fatal(err)
			}
			ok, rehash, err := current.Verify(ctx, old, "tr0ub4dor&3")
			if !ok || !rehash || err != nil {
				t.Fatalf("Verify(hash with %s changed) = %v, %v, %v; want true, true, nil", name, ok, rehash, err)
			}
			if ok, rehash, _ := current.Verify(ctx, old, "tr0ub4dor&4"); ok || rehash {
				t.Errorf("Verify(hash with %s changed, wrong password) = %v, %v; want false, false", name, ok, rehash)
			}
			renewed, err := current.Hash(ctx, "tr0ub4dor&3")
			if err != nil {
				t.Fatal(err)
			}
			if ok, rehash, err := current.Verify(ctx, renewed, "tr0ub4dor&3"); !ok || rehash || err != nil {
				t.Errorf("Verify(re-hashed) = %v, %v, %v; want true, false, nil", ok, rehash, err)
			}
		})
	}
}

func TestRFC9106Params(t *testing.T) {
	p := RFC9106Params()
	want := Argon2idParams{Memory: 65536, Iterations: 3, Parallelism: 4, SaltLength: 16, KeyLength: 32}
	if p != want {
		t.Fatalf("RFC9106Params() = %+v, want %+v", p, want)
	}
	if _, err := NewArgon2id(p); err != nil {
		t.Fatalf("NewArgon2id(RFC9106Params()): %v", err)
	}
	// RFC 9106's first recommended option, 2 GiB and t=1, is accepted too.
	if _, err := NewArgon2id(Argon2idParams{Memory: 2 << 20, Iterations: 1, Parallelism: 4, SaltLength: 16, KeyLength: 32}); err != nil {
		t.Fatalf("NewArgon2id(RFC 9106 first option): %v", err)
	}
}

func TestNewArgon2idRefusesBadConfig(t *testing.T) {
	cases := map[string]struct {
		change func(*Argon2idParams)
		opts   []Argon2idOption
		field  string
	}{
		"zero parallelism":     {change: func(p *Argon2idParams) { p.Parallelism = 0 }, field: "Parallelism"},
		"zero iterations":      {change: func(p *Argon2idParams) { p.Iterations = 0 }, field: "Iterations"},
		"memory below 8p":      {change: func(p *Argon2idParams) { p.Memory, p.Parallelism = 31, 4 }, field: "Memory"},
		"memory over 2 GiB":    {change: func(p *Argon2idParams) { p.Memory = 2<<20 + 1 }, field: "Memory"},
		"work over the bound":  {change: func(p *Argon2idParams) { p.Memory, p.Iterations = 2<<20, 5 }, field: "Memory × Iterations"},
		"short salt":           {change: func(p *Argon2idParams) { p.SaltLength = 7 }, field: "SaltLength"},
		"zero salt":            {change: func(p *Argon2idParams) { p.SaltLength = 0 }, field: "SaltLength"},
		"long salt":            {change: func(p *Argon2idParams) { p.SaltLength = 65 }, field: "SaltLength"},
		"short key":            {change: func(p *Argon2idParams) { p.KeyLength = 15 }, field: "KeyLength"},
		"long key":             {change: func(p *Argon2idParams) { p.KeyLength = 129 }, field: "KeyLength"},
		"zero params":          {change: func(p *Argon2idParams) { *p = Argon2idParams{} }, field: "Parallelism"},
		"zero max concurrent":  {opts: []Argon2idOption{WithMaxConcurrent(0)}, field: "WithMaxConcurrent"},
		"negative concurrency": {opts: []Argon2idOption{WithMaxConcurrent(-3)}, field: "WithMaxConcurrent"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := testParams
			if c.change != nil {
				c.change(&p)
			}
			a, err := NewArgon2id(p, c.opts...)
			if a != nil || !errors.Is(err, core.ErrInvalidConfig) {
				t.Fatalf("NewArgon2id(%+v) = %v, %v; want nil and core.ErrInvalidConfig", p, a, err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %q does not name %s", err, c.field)
			}
		})
	}
	// A nil option is ignored.
	if _, err := NewArgon2id(testParams, nil); err != nil {
		t.Errorf("NewArgon2id with a nil option: %v", err)
	}
}

// TestVerifyMalformedPHC: strings that are not argon2id PHC hashes within
// bounds are refused with ErrUnknownHash, without computing (and so
// without allocating what they ask for).
func TestVerifyMalformedPHC(t *testing.T) {
	const salt, key = "c29tZXNhbHQ", "CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc"
	good := "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key
	bad := []string{
		"",
		"$",
		"password",
		"$argon2id",
		"$argon2id$v=19$m=64,t=1,p=1$" + salt,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$",
		"argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"x$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2d$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$ARGON2ID$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", // bcrypt
		"$argon2id$v=16$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$m=64,t=1,p=1$" + salt + "$" + key + "$", // no version
		"$argon2id$v=019$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$t=1,m=64,p=1$" + salt + "$" + key,     // order
		"$argon2id$v=19$m=64,t=1$" + salt + "$" + key,         // p missing
		"$argon2id$v=19$m=64,t=1,p=1,k=2$" + salt + "$" + key, // extra
		"$argon2id$v=19$m=64,t=1,p=1,keyid=x$" + salt + "$" + key,
		"$argon2id$v=19$m=064,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=+64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=-64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=6 4,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=0x40,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=256$" + salt + "$" + key,
		"$argon2id$v=19$m=15,t=1,p=2$" + salt + "$" + key, // m < 8p
		"$argon2id$v=19$m=4294967295,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=4294967296,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=99999999999999999999,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=2097153,t=1,p=1$" + salt + "$" + key,     // 2 GiB + 1 KiB
		"$argon2id$v=19$m=2097152,t=5,p=4$" + salt + "$" + key,     // 10 GiB of passes
		"$argon2id$v=19$m=64,t=4294967295,p=1$" + salt + "$" + key, // absurd time
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "=$" + key,         // padding
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "=",
		"$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHR$" + key,                       // non-canonical last character
		"$argon2id$v=19$m=64,t=1,p=1$c29t-XNhbHQ$" + key,                       // URL alphabet
		"$argon2id$v=19$m=64,t=1,p=1$c29tZXNh$" + key,                          // salt of 6 bytes
		"$argon2id$v=19$m=64,t=1,p=1$$" + key,                                  // no salt
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$",                            // no hash
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$AAAAAAAAAAAAAAAAAAAA",        // 15-byte hash
		"$argon2id$v=19$m=64,t=1,p=1$" + strings.Repeat("A", 88) + "$" + key,   // 66-byte salt
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + strings.Repeat("A", 176), // 132-byte hash
		good + strings.Repeat("A", 1<<20),
		strings.Repeat("$", 1<<16),
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "\x00$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "\n",
		" " + good,
	}
	ctx := context.Background()
	a := newTestHasher(t, testParams)
	if _, _, err := a.Verify(ctx, good, "password"); err != nil {
		t.Fatalf("the well-formed base string is refused: %v", err)
	}
	for _, h := range bad {
		name := h
		if len(name) > 80 {
			name = name[:80] + "…"
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ok, rehash, err := a.Verify(ctx, h, "password")
		runtime.ReadMemStats(&after)
		if ok || rehash || !errors.Is(err, ErrUnknownHash) {
			t.Errorf("Verify(%q) = %v, %v, %v; want ErrUnknownHash", name, ok, rehash, err)
			continue
		}
		if strings.Contains(err.Error(), salt) || strings.Contains(err.Error(), key) {
			t.Errorf("Verify(%q): the error %q quotes the hash", name, err)
		}
		// Refusing allocates little whatever the string asks for (the
		// 1 MiB string itself is the caller's).
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("Verify(%q) allocated %d bytes to refuse it", name, n)
		}
	}
}

func TestOversizedPassword(t *testing.T) {
	ctx := context.Background()
	a := newTestHasher(t, testParams)
	atLimit := strings.Repeat("a", MaxBytes)
	over := atLimit + "a"
	h, err := a.Hash(ctx, atLimit)
	if err != nil {
		t.Fatalf("Hash of %d bytes: %v", MaxBytes, err)
	}
	if ok, _, err := a.Verify(ctx, h, atLimit); !ok || err != nil {
		t.Fatalf("Verify of %d bytes = %v, %v", MaxBytes, ok, err)
	}
	if _, err := a.Hash(ctx, over); !errors.Is(err, ErrTooLong) || !errors.Is(err, ErrPolicy) {
		t.Errorf("Hash of %d bytes: err = %v, want ErrTooLong and ErrPolicy", len(over), err)
	}
	if ok, rehash, err := a.Verify(ctx, h, over); ok || rehash || !errors.Is(err, ErrTooLong) {
		t.Errorf("Verify of %d bytes = %v, %v, %v; want ErrTooLong", len(over), ok, rehash, err)
	}
	// The check comes before the hash is read: a huge password with a
	// malformed hash is refused as too long.
	if _, _, err := a.Verify(ctx, "junk", over); !errors.Is(err, ErrTooLong) {
		t.Errorf("Verify(junk, oversized) err = %v, want ErrTooLong", err)
	}
}

// spyCtx reports, by closing reached, the first time something waits on
// it: acquire has found no free slot and is blocked in its select.
type spyCtx struct {
	context.Context
	once    sync.Once
	reached chan struct{}
}

func (c *spyCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.reached) })
	return c.Context.Done()
}

func waitingCtx() (*spyCtx, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return &spyCtx{Context: ctx, reached: make(chan struct{})}, cancel
}

// TestMaxConcurrent: when every slot is taken, Hash and Verify wait; a
// context ended while waiting returns its error and leaves every slot
// as it was.
func TestMaxConcurrent(t *testing.T) {
	a := newTestHasher(t, testParams, WithMaxConcurrent(2))
	bg := context.Background()
	hash, err := a.Hash(bg, "password1")
	if err != nil {
		t.Fatal(err)
	}
	// A stored hash with three times the memory counts as two slots (all
	// there are).
	bigP := testParams
	bigP.Memory = 3 * testParams.Memory
	big, err := newTestHasher(t, bigP).Hash(bg, "password1")
	if err != nil {
		t.Fatal(err)
	}

	release, err := a.slots.acquire(bg, 1) // one of two slots taken
	if err != nil {
		t.Fatal(err)
	}
	// One slot is free: a current hash goes through.
	if ok, _, err := a.Verify(bg, hash, "password1"); !ok || err != nil {
		t.Fatalf("Verify with one slot free = %v, %v", ok, err)
	}
	// The big hash needs both: it waits, and gives up with its context,
	// handing back the slot it had taken.
	ctx, cancel := waitingCtx()
	done := make(chan error, 1)
	go func() { _, _, err := a.Verify(ctx, big, "password1"); done <- err }()
	<-ctx.reached
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify cancelled while waiting: err = %v, want context.Canceled", err)
	}
	release()
	// Both slots are free again: the big hash takes them.
	if ok, rehash, err := a.Verify(bg, big, "password1"); !ok || !rehash || err != nil {
		t.Fatalf("Verify(big) with both slots free = %v, %v, %v", ok, rehash, err)
	}

	// With both slots held, Hash waits too.
	r1, _ := a.slots.acquire(bg, 1)
	r2, _ := a.slots.acquire(bg, 1)
	ctx, cancel = waitingCtx()
	go func() { _, err := a.Hash(ctx, "password1"); done <- err }()
	<-ctx.reached
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash cancelled while waiting: err = %v, want context.Canceled", err)
	}
	r1()
	r2()
	// A context already ended is refused at once, even with slots free.
	ended, stop := context.WithCancel(bg)
	stop()
	if _, err := a.Hash(ended, "password1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash with an ended context: err = %v", err)
	}
	if len(a.slots.free) != 2 {
		t.Fatalf("%d slots free after all returned, want 2", len(a.slots.free))
	}
}

// TestConcurrentHashing: many hashes, big and small, through two slots all
// finish (no deadlock between multi-slot and single-slot requests), and
// never more than two slots' worth run at once.
func TestConcurrentHashing(t *testing.T) {
	a := newTestHasher(t, testParams, WithMaxConcurrent(2))
	bg := context.Background()
	small, err := a.Hash(bg, "password1")
	if err != nil {
		t.Fatal(err)
	}
	bigP := testParams
	bigP.Memory = 2 * testParams.Memory
	big, err := newTestHasher(t, bigP).Hash(bg, "password1")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			h := small
			if i%3 == 0 {
				h = big
			}
			if ok, _, err := a.Verify(bg, h, "password1"); !ok || err != nil {
				errs <- fmt.Errorf("Verify %d = %v, %v", i, ok, err)
			}
			if len(a.slots.free) > 2 {
				errs <- fmt.Errorf("%d slots free, more than there are", len(a.slots.free))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(a.slots.free) != 2 {
		t.Fatalf("%d slots free after all returned, want 2", len(a.slots.free))
	}
}

func TestDummyHash(t *testing.T) {
	ctx := context.Background()
	a := newTestHasher(t, testParams)
	d1, err := a.DummyHash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := a.DummyHash(ctx)
	if err != nil || d2 != d1 {
		t.Fatalf("second DummyHash = %q, %v; want the first, %q", d2, err, d1)
	}
	if !phcShape.MatchString(d1) {
		t.Errorf("DummyHash = %q, not a hash with the hasher's parameters", d1)
	}
	for _, pw := range []string{"", "password", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		if ok, rehash, err := a.Verify(ctx, d1, pw); ok || rehash || err != nil {
			t.Errorf("Verify(dummy, %q) = %v, %v, %v; want false, false, nil", pw, ok, rehash, err)
		}
	}
	// Through the package function and WithVerifiers, the same one.
	for name, h := range map[string]Hasher{"Argon2id": a, "WithVerifiers": WithVerifiers(a, prefixVerifier{})} {
		if d, err := DummyHash(ctx, h); err != nil || d != d1 {
			t.Errorf("DummyHash(%s) = %q, %v; want %q", name, d, err, d1)
		}
	}
	// A Hasher without one: a fresh hash each call, of the Hasher's making.
	other := plainHasher{a}
	d3, err := DummyHash(ctx, other)
	if err != nil || d3 == d1 || !phcShape.MatchString(d3) {
		t.Errorf("DummyHash(a Hasher without DummyHash) = %q, %v", d3, err)
	}
	ended, stop := context.WithCancel(ctx)
	stop()
	if _, err := newTestHasher(t, testParams).DummyHash(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("DummyHash with an ended context: %v", err)
	}
}

// plainHasher hides Argon2id's DummyHash method.
type plainHasher struct{ h Hasher }

func (p plainHasher) Hash(ctx context.Context, pw string) (string, error) { return p.h.Hash(ctx, pw) }
func (p plainHasher) Verify(ctx context.Context, h, pw string) (bool, bool, error) {
	return p.h.Verify(ctx, h, pw)
}
