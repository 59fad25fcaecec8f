package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAptMirror(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name: "deb822, security stanza first",
			files: map[string]string{"sources.list.d/debian.sources": `Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
# a comment
URIs: http://mirror.example/debian http://other.example/debian
Suites: bookworm bookworm-updates
Components: main
`},
			want: "http://mirror.example/debian",
		},
		{
			name: "deb822, disabled stanza skipped",
			files: map[string]string{"sources.list.d/a.sources": `Enabled: no
Types: deb
URIs: http://off.example/debian
Suites: bookworm

Types: deb-src deb
URIs: http://on.example/debian
Suites: bookworm
`},
			want: "http://on.example/debian",
		},
		{
			name: "one-line, with options",
			files: map[string]string{"sources.list": `# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] http://opt.example/debian bookworm main
`},
			want: "http://opt.example/debian",
		},
		{
			name:  "sources.list wins over sources.list.d",
			files: map[string]string{"sources.list": "deb http://a.example/debian bookworm main\n", "sources.list.d/b.list": "deb http://b.example/debian bookworm main\n"},
			want:  "http://a.example/debian",
		},
		{
			name:  "other suites only: the default",
			files: map[string]string{"sources.list": "deb http://a.example/debian trixie main\n"},
			want:  "http://deb.debian.org/debian",
		},
		{name: "nothing: the default", want: "http://deb.debian.org/debian"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := aptMirror(dir, "bookworm"); got != tt.want {
				t.Errorf("aptMirror = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestImageHash checks that an image's tag changes with each of its inputs,
// and only with them.
func TestImageHash(t *testing.T) {
	dir := t.TempDir()
	extra := filepath.Join(dir, "bin")
	if err := os.WriteFile(extra, []byte("one"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := image{name: "mongodb", extra: extra}
	h1, err := imageHash("base1", img)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := imageHash("base1", img); again != h1 {
		t.Errorf("same inputs, different hashes %s and %s", h1, again)
	}
	if other, _ := imageHash("base2", img); other == h1 {
		t.Error("another base image, same hash")
	}
	if other, _ := imageHash("base1", image{name: "redis", extra: extra}); other == h1 {
		t.Error("another image's files, same hash")
	}
	if err := os.WriteFile(extra, []byte("two"), 0o755); err != nil {
		t.Fatal(err)
	}
	if other, _ := imageHash("base1", img); other == h1 {
		t.Error("another stand-in binary, same hash")
	}
	if _, err := imageHash("base1", image{name: "mongodb", extra: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing extra file: no error")
	}
}

// TestImagesEmbedded checks that every image has a Containerfile that
// starts from the base image.
func TestImagesEmbedded(t *testing.T) {
	for _, name := range []string{"postgres", "mariadb", "redis", "mongodb"} {
		data, err := images.ReadFile("images/" + name + "/Containerfile")
		if err != nil {
			t.Fatal(err)
		}
		if !containsLine(string(data), "FROM "+baseImage) {
			t.Errorf("%s: Containerfile does not start FROM %s", name, baseImage)
		}
	}
}

func containsLine(s, line string) bool {
	return slices.Contains(strings.Split(s, "\n"), line)
}
