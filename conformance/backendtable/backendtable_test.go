package backendtable

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	table, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memory", "bbolt", "sqlite", "postgres", "mysql", "redis", "redis-cluster", "mongodb"} {
		if _, ok := table.Get(want); !ok {
			t.Errorf("the table has no %s", want)
		}
	}
	if b, _ := table.Get("postgres"); b.Module != "adapters/postgres-gorm" || b.Env != "AUTHPORT_POSTGRES_URL" || b.Container == nil {
		t.Errorf("postgres = %+v", b)
	}
	if got := table.Module("adapters/postgres-gorm").Names(); strings.Join(got, " ") != "postgres postgres-ha mysql sqlite" {
		t.Errorf("the backends of adapters/postgres-gorm: %q", got)
	}
	if got := len(table.Started(StartEmbedded)) + len(table.Started(StartServices)) + len(table.Started(StartExternal)); got != len(table) {
		t.Errorf("%d rows start one of the three ways, of %d", got, len(table))
	}
}

func TestParseRejects(t *testing.T) {
	for name, data := range map[string]string{
		"not json":       `{`,
		"unknown field":  `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "embedded", "colour": "red"}]}`,
		"empty":          `{"backends": []}`,
		"twice":          `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "embedded"}, {"name": "a", "title": "A", "module": "adapters/a", "start": "embedded"}]}`,
		"bad name":       `{"backends": [{"name": "A b", "title": "A", "module": "adapters/a", "start": "embedded"}]}`,
		"no module":      `{"backends": [{"name": "a", "title": "A", "start": "embedded"}]}`,
		"bad start":      `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "docker"}]}`,
		"no env":         `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "external"}]}`,
		"services url":   `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "services", "env": "AUTHPORT_A_URL"}]}`,
		"embedded env":   `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "embedded", "env": "AUTHPORT_A_URL"}]}`,
		"container half": `{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "external", "env": "AUTHPORT_A_URL", "container": {"image": "a:1"}}]}`,
	} {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	table, err := Parse([]byte(`{"backends": [{"name": "a", "title": "A", "module": "adapters/a", "start": "external", "env": "AUTHPORT_A_URL"}]}`))
	if err != nil || len(table) != 1 || table[0].Env != "AUTHPORT_A_URL" {
		t.Errorf("a good table: %+v, %v", table, err)
	}
}
