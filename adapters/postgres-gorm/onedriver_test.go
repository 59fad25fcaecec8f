package gormadapter

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// oneDriverProgram is the program TestOneDriverLinked builds per dialect:
// it stores its users through the adapter, as an application does, opening
// the dialector gorm.io/driver/<dialect> (%[1]s is the dialect).
// It is built, never run.
const oneDriverProgram = `package main

import (
	"context"
	"log"
	"os"

	gormadapter "github.com/authport/authport/adapters/postgres-gorm"
	"gorm.io/driver/%[1]s"
	"gorm.io/gorm"
)

func main() {
	dsn := os.Getenv("DSN")
	db, err := gorm.Open(%[1]s.Open(dsn), &gorm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	store, err := gormadapter.New(context.Background(), db)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(context.Background()); err != nil {
		log.Fatal(err)
	}
}
`

// TestOneDriverLinked builds a program per dialect that opens its gorm
// dialector and the adapter (oneDriverProgram), and checks with
// `go version -m` that the binary links that dialect's driver and no
// other: the adapter imports no driver (errors.go recognises their errors
// by shape), so a PostgreSQL program links no MySQL or SQLite driver, as
// the README says. It needs no database.
func TestOneDriverLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs; skipped with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	drivers := map[string][]string{
		"postgres": {"gorm.io/driver/postgres", "github.com/jackc/pgx/v5"},
		"mysql":    {"gorm.io/driver/mysql", "github.com/go-sql-driver/mysql"},
		"sqlite":   {"gorm.io/driver/sqlite", "github.com/mattn/go-sqlite3"},
	}
	for dialect, own := range drivers {
		t.Run(dialect, func(t *testing.T) {
			tmp := t.TempDir()
			bin := filepath.Join(tmp, dialect)
			overlay := oneDriverOverlay(t, tmp, dialect)
			args := []string{"build", "-o", bin, "-overlay", overlay}
			if raceEnabled {
				args = append(args, "-race") // reuses what the test binary compiled
			}
			build := exec.Command(goCmd, append(args, "./testdata/onedriver/"+dialect)...)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go %s: %v\n%s", strings.Join(build.Args[1:], " "), err, out)
			}
			out, err := exec.Command(goCmd, "version", "-m", bin).Output()
			if err != nil {
				t.Fatalf("go version -m: %v", err)
			}
			linked := map[string]bool{}
			for _, line := range strings.Split(string(out), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" {
					linked[f[1]] = true
				}
			}
			for _, m := range own {
				if !linked[m] {
					t.Errorf("a %s program does not link %s (go version -m:\n%s)", dialect, m, out)
				}
			}
			for other, mods := range drivers {
				for _, m := range mods {
					if other != dialect && linked[m] {
						t.Errorf("a %s program links %s, the %s driver: the adapter must import no driver (go version -m:\n%s)", dialect, m, other, out)
					}
				}
			}
			if linked["modernc.org/sqlite"] {
				t.Errorf("a %s program links modernc.org/sqlite", dialect)
			}
		})
	}
}

// oneDriverOverlay writes oneDriverProgram for dialect into dir and returns
// a go build -overlay file that places it at testdata/onedriver/<dialect>
// in this module (a directory that exists only in the overlay), so it
// builds with this module's requirements.
func oneDriverOverlay(t *testing.T, dir, dialect string) string {
	t.Helper()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, fmt.Appendf(nil, oneDriverProgram, dialect), 0o644); err != nil {
		t.Fatal(err)
	}
	at, err := filepath.Abs(filepath.Join("testdata", "onedriver", dialect, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {at: src}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(file, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
