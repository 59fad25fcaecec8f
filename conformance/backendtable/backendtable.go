// Package backendtable is the one table of the repository's backends:
// each backend's name, the module whose TestConformance runs it, the
// variable that names its server, how that server starts, and the image
// that starts it in a container. The table is backends.json beside this
// file, embedded here; adding a backend is adding a row there (see
// CONTRIBUTING.md, "Adding a backend").
//
// Every reader takes the backends from it: conformance/provision (the
// variables and the names AUTHPORT_REQUIRE accepts), the matrix
// (conformance/cmd/authport-matrix, its columns), the container suite
// (tests/backends), the fault suite (tests/faults) and the bench
// (tools/bench) through this package; the test command (tools/ci) and the
// release's consumer check (tools/release), which work on a checkout they
// are given, read backends.json of that checkout with [Parse].
//
// The package uses the standard library only, so that importing it brings
// a module nothing.
package backendtable

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Path is where the table lives, from the repository root.
const Path = "conformance/backendtable/backends.json"

// How a backend's server starts ([Backend.Start]).
const (
	// StartEmbedded: nothing to start; the test opens the store in
	// process or in a file of its own.
	StartEmbedded = "embedded"
	// StartServices: scripts/services.sh (tools/ci) starts the server on
	// this machine, in its step of the backend's name, and exports the
	// backend's variable.
	StartServices = "services"
	// StartExternal: someone else runs the server and sets the backend's
	// variable; scripts/services.sh passes it through.
	StartExternal = "external"
)

// Backend is one row of the table.
type Backend struct {
	// Name is the backend's name: the conformance suite's subtest
	// (TestConformance/<Name>/...), the AUTHPORT_REQUIRE name and, for
	// StartServices, the AUTHPORT_SERVICES name.
	Name string `json:"name"`
	// Title names the server in messages, e.g. "PostgreSQL".
	Title string `json:"title"`
	// Module is the directory, from the repository root, of the module
	// whose TestConformance runs this backend.
	Module string `json:"module"`
	// Env is the variable that names the running server, e.g.
	// AUTHPORT_POSTGRES_URL; empty for an embedded backend.
	Env string `json:"env,omitempty"`
	// Form says what Env holds when a URL does not say it all.
	Form string `json:"form,omitempty"`
	// URL is Env's value for the server scripts/services.sh provides on
	// this machine (the default ports).
	URL string `json:"url,omitempty"`
	// Start is how the server starts: StartEmbedded, StartServices or
	// StartExternal.
	Start string `json:"start"`
	// Container, when set, is the image tests/backends starts through
	// testcontainers-go to run the module's TestConformance on.
	Container *Container `json:"container,omitempty"`
	// Drivers are the module path prefixes of the backend's own driver,
	// which no consumer of another module may pull in (the consumer check).
	Drivers []string `json:"drivers,omitempty"`
}

// Container is the image a backend runs in for tests/backends.
type Container struct {
	// ImageEnv is the variable that overrides Image, e.g.
	// AUTHPORT_POSTGRES_IMAGE.
	ImageEnv string `json:"imageEnv"`
	// Image is the official image, e.g. postgres:17.
	Image string `json:"image"`
}

// Table is the backends in their order: the matrix's columns, the order
// in which services start.
type Table []Backend

//go:embed backends.json
var embedded []byte

// Read returns the table embedded in this package.
func Read() (Table, error) { return Parse(embedded) }

// Parse reads a table in the form of backends.json and checks every row.
func Parse(data []byte) (Table, error) {
	var file struct {
		Backends Table `json:"backends"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%s: %w", Path, err)
	}
	if len(file.Backends) == 0 {
		return nil, fmt.Errorf("%s: no backends", Path)
	}
	seen := map[string]bool{}
	var errs []error
	for i, b := range file.Backends {
		if err := b.check(); err != nil {
			errs = append(errs, fmt.Errorf("%s: backend %d (%q): %w", Path, i+1, b.Name, err))
		}
		if seen[b.Name] {
			errs = append(errs, fmt.Errorf("%s: backend %q is listed twice", Path, b.Name))
		}
		seen[b.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return file.Backends, nil
}

// check reports what is wrong with one row.
func (b Backend) check() error {
	namePattern := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	envPattern := regexp.MustCompile(`^AUTHPORT_[A-Z0-9_]+_URL$`)
	modulePattern := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$`)
	var errs []error
	if !namePattern.MatchString(b.Name) {
		errs = append(errs, errors.New("name: want lower-case letters, digits and dashes"))
	}
	if b.Title == "" {
		errs = append(errs, errors.New("title: empty"))
	}
	if !modulePattern.MatchString(b.Module) {
		errs = append(errs, fmt.Errorf("module %q: want a directory from the repository root, such as adapters/memory", b.Module))
	}
	switch b.Start {
	case StartEmbedded:
		if b.Env != "" || b.URL != "" || b.Container != nil {
			errs = append(errs, errors.New("an embedded backend has no env, url or container"))
		}
	case StartServices, StartExternal:
		if !envPattern.MatchString(b.Env) {
			errs = append(errs, fmt.Errorf("env %q: want AUTHPORT_<NAME>_URL", b.Env))
		}
	default:
		errs = append(errs, fmt.Errorf("start %q: want %s, %s or %s", b.Start, StartEmbedded, StartServices, StartExternal))
	}
	if b.Start == StartServices && b.URL == "" {
		errs = append(errs, errors.New("a backend scripts/services.sh starts needs the url it serves"))
	}
	if c := b.Container; c != nil && (c.Image == "" || !strings.HasPrefix(c.ImageEnv, "AUTHPORT_") || !strings.HasSuffix(c.ImageEnv, "_IMAGE")) {
		errs = append(errs, errors.New("container: want an image and an imageEnv AUTHPORT_<NAME>_IMAGE"))
	}
	return errors.Join(errs...)
}

// Names returns the backends' names in table order.
func (t Table) Names() []string {
	names := make([]string, len(t))
	for i, b := range t {
		names[i] = b.Name
	}
	return names
}

// Get returns the backend named name.
func (t Table) Get(name string) (Backend, bool) {
	for _, b := range t {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// Started returns the backends whose server starts as start says, in
// table order.
func (t Table) Started(start string) Table {
	return t.where(func(b Backend) bool { return b.Start == start })
}

// Module returns the backends the module in directory module runs, in
// table order: the first is the one the consumer check runs the module's
// program against.
func (t Table) Module(module string) Table {
	return t.where(func(b Backend) bool { return b.Module == module })
}

// where returns the backends keep accepts, in table order.
func (t Table) where(keep func(Backend) bool) Table {
	var out Table
	for _, b := range t {
		if keep(b) {
			out = append(out, b)
		}
	}
	return out
}
