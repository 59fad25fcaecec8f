// Package conformance is the suite every authport adapter runs: one subtest
// per rule of the adapter contract, named
// TestConformance/<backend>/<specMethod>/<rule> so that a failure points at
// the rule it breaks.
//
// An adapter's module runs it from a test, TestConformance, which calls
// [Run] with a [Harness] (the package's Example shows one). The [Harness]
// gives each test a fresh adapter and a [Raw] view of what is really
// stored, so the suite checks the database and not only what the adapter
// says. Rules of methods the adapter does not implement are skipped
// with the name of the missing method; everything it implements must pass.
//
// Package provision, beside this one, finds the database servers the tests
// run against.
package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// rule is one rule of the contract, checked by one subtest.
type rule struct {
	// group is the second-level subtest name: a spec method name, or a
	// name for rules that span methods (e.g. "purgeExpired").
	group string
	name  string
	// needs lists every adapter method the rule calls; the rule is skipped
	// when the adapter lacks one. It need not repeat group.
	needs []core.Method
	// needsPurge marks rules of the core.ExpiredPurger extension, which
	// run only for adapters that offer it.
	needsPurge bool
	// extension names an optional adapter interface beyond the spec
	// methods that the rule needs; the rule is skipped, named, without it.
	extension core.Extension
	// needsRawWriter marks rules that write through the [RawWriter] view;
	// they are skipped, named, when the Raw view does not offer it.
	needsRawWriter bool
	// needsDataWriter marks rules that write through the [UserDataWriter]
	// view; they are skipped, named, when the Raw view does not offer it.
	needsDataWriter bool
	// needsFactorRaw marks rules about what is really stored of second
	// factors, read through the [FactorRaw] view; they are skipped, named,
	// when the Raw view does not offer it.
	needsFactorRaw bool
	// needsPeer marks rules that run a second adapter instance on the same
	// store ([Fixture.Peer]); they are skipped, named, without one.
	needsPeer bool
	// needsLossyPeer marks rules that lose replies through
	// [Fixture.LossyPeer]; they are skipped, named, without one.
	needsLossyPeer bool
	run            func(t *testing.T, e *env)
}

// Run runs every rule of the contract against the backend h describes, as
// subtests of t named <h.Name>/<specMethod>/<rule>.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Name == "" || h.New == nil {
		t.Fatal("conformance.Run: Harness needs a Name and a New function")
	}
	t.Run(h.Name, func(t *testing.T) {
		if h.Parallel {
			t.Parallel()
		}
		// One fixture up front: a backend whose database is missing skips
		// (or fails) here, once, and the adapter's extensions are known.
		probe := h.New(t)
		_, purger := probe.Adapter.(core.ExpiredPurger)
		for _, group := range groupRules(allRules()) {
			if group.rules[0].needsPurge && !purger {
				continue // an extension the adapter does not offer
			}
			if len(h.Groups) > 0 && !slices.Contains(h.Groups, group.name) {
				continue // the harness runs other groups only
			}
			t.Run(group.name, func(t *testing.T) {
				for _, r := range group.rules {
					t.Run(r.name, func(t *testing.T) { runRule(t, h, r) })
				}
			})
		}
	})
}

type ruleGroup struct {
	name  string
	rules []rule
}

// groupRules groups rules by group name, keeping first-seen order.
func groupRules(rules []rule) []ruleGroup {
	var groups []ruleGroup
	index := map[string]int{}
	for _, r := range rules {
		i, ok := index[r.group]
		if !ok {
			i = len(groups)
			index[r.group] = i
			groups = append(groups, ruleGroup{name: r.group})
		}
		groups[i].rules = append(groups[i].rules, r)
	}
	return groups
}

func runRule(t *testing.T, h Harness, r rule) {
	for _, key := range []string{r.group, r.group + "/" + r.name} {
		if why, ok := h.Skip[key]; ok {
			t.Skipf("skipped by the harness (%s): %s", key, why)
		}
	}
	f := h.New(t)
	if f.Adapter == nil || f.Raw == nil {
		t.Fatal("Harness.New returned a Fixture without an Adapter or a Raw view")
	}
	caps := core.Probe(f.Adapter)
	needs := r.needs
	if m := core.Method(r.group); caps.Has(m) || isSpecMethod(m) {
		needs = append([]core.Method{m}, needs...)
	}
	if missing := caps.Missing(needs...); len(missing) > 0 {
		t.Skipf("adapter %s does not implement %v", caps.Adapter(), missing)
	}
	if r.extension != "" && !caps.HasExtension(r.extension) {
		t.Skipf("adapter %s does not implement %s (an optional extension)", caps.Adapter(), r.extension)
	}
	if _, ok := f.Raw.(RawWriter); r.needsRawWriter && !ok {
		t.Skipf("the Raw view %T does not implement conformance.RawWriter, which this rule writes through", f.Raw)
	}
	if _, ok := f.Raw.(UserDataWriter); r.needsDataWriter && !ok {
		t.Skipf("the Raw view %T does not implement conformance.UserDataWriter, which this rule writes through", f.Raw)
	}
	if _, ok := f.Raw.(FactorRaw); r.needsFactorRaw && !ok {
		t.Skipf("the Raw view %T does not implement conformance.FactorRaw, which this rule reads the stored factors through", f.Raw)
	}
	if r.needsPeer && f.Peer == nil {
		t.Skip("the harness gives no second adapter instance on the same store (conformance.Fixture.Peer is nil), which this rule runs")
	}
	if r.needsLossyPeer && f.LossyPeer == nil {
		t.Skip("the harness gives no adapter instance that loses replies (conformance.Fixture.LossyPeer is nil), which this rule runs")
	}
	purger, _ := f.Adapter.(core.ExpiredPurger)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	e := &env{ctx: ctx, a: core.NewStore(f.Adapter), adapter: f.Adapter, raw: f.Raw, purger: purger}
	if r.needsPeer {
		peer := f.Peer(t)
		if peer == nil {
			t.Fatal("conformance.Fixture.Peer returned nil")
		}
		e.peer = core.NewStore(peer)
		if missing := core.Probe(e.peer).Missing(needs...); len(missing) > 0 {
			t.Fatalf("the peer adapter %T lacks %v, which the fixture's adapter has", peer, missing)
		}
	}
	if r.needsLossyPeer {
		lossy, loser := f.LossyPeer(t)
		if lossy == nil || loser == nil {
			t.Fatal("conformance.Fixture.LossyPeer returned nil")
		}
		e.lossy, e.loser = core.NewStore(lossy), loser
	}
	if c, ok := f.Raw.(ConsistencyChecker); ok {
		// Registered before the rule runs so that it runs after the rule
		// and before the fixture's own teardown.
		t.Cleanup(func() {
			if err := c.CheckConsistency(context.Background()); err != nil {
				t.Errorf("storage is inconsistent after the test: %v", err)
			}
		})
	}
	r.run(t, e)
}

func isSpecMethod(m core.Method) bool { return slices.Contains(core.Methods(), m) }

// allRules lists every rule, in the order of SPEC §4.
func allRules() []rule {
	rs := slices.Concat(userRules(), optionalEmailRules(), usernameRules(), userDataRules(), accountRules(), passwordHashRules(), accountListRules(), accountUpdateRules(),
		sessionRules(), extendRules(), sessionInventoryRules(), tokenRules(), authenticatorRules(), factorRules(), purgeRules(), raceRules(),
		counterRules(), cutRules(), lostReplyRules())
	for _, r := range slices.Concat(flowRules(), accountFlowRules(), inventoryFlowRules(), familyFlowRules(), passwordFlowRules(), factorFlowRules()) {
		r.needs = append(slices.Clone(flowNeeds), r.needs...)
		rs = append(rs, r)
	}
	return rs
}
