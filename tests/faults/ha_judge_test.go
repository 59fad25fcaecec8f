package faults

import "testing"

// TestHAProblems: the failover judge fails a row that undid an
// acknowledged write where the deployment promises none, and only reports
// it where it does not (asynchronous replication).
func TestHAProblems(t *testing.T) {
	good := haRow{row: row{acked: 100}, promised: true}
	if p := haProblems(good); len(p) != 0 {
		t.Fatalf("a clean row fails: %v", p)
	}
	for name, undo := range map[string]func(*haRow){
		"token use back":                       func(r *haRow) { r.tokensBack = 1 },
		"deleted user back":                    func(r *haRow) { r.deletedBack = 1 },
		"session back":                         func(r *haRow) { r.sessionsBack = 1 },
		"session lost":                         func(r *haRow) { r.sessionsLost = 1 },
		"other write lost":                     func(r *haRow) { r.lost = 1 },
		"revoked session readable again":       func(r *haRow) { r.revokedBack = 1 },
		"rotated refresh token accepted again": func(r *haRow) { r.rotationsBack = 1 },
	} {
		r := good
		undo(&r)
		if len(haProblems(r)) != 1 {
			t.Errorf("%s: promised row not failed: %v", name, haProblems(r))
		}
		r.promised = false
		if p := haProblems(r); len(p) != 0 {
			t.Errorf("%s: unpromised row failed: %v", name, p)
		}
	}
	for name, bad := range map[string]func(*haRow){
		"panic":       func(r *haRow) { r.panics = 1 },
		"hung":        func(r *haRow) { r.hung = 1 },
		"no recovery": func(r *haRow) { r.recovery = -1 },
		"no load":     func(r *haRow) { r.acked = 3 },
	} {
		r := good
		r.promised = false
		bad(&r)
		if len(haProblems(r)) != 1 {
			t.Errorf("%s: not failed: %v", name, haProblems(r))
		}
	}
}
