// betterauth-fixture.mjs makes testdata/betterauth-cookies.json: session
// cookies that Better Auth itself (pinned in ../interop/betterauth) set on
// an e-mail sign-up, one case a cookie cache strategy, for the Go tests
// and fuzz seeds that run without Node. Regenerate with
//
//   node testdata/betterauth-fixture.mjs > testdata/betterauth-cookies.json
//
// Each case records the secret, the time just after the sign-up (the tests
// read the cookies from then on), the cookies as name=value pairs, and the
// user and session rows Better Auth stored.
const { betterAuth, memoryAdapter } = await import(new URL("../interop/betterauth/index.mjs", import.meta.url));

const secret = "better-auth-fixture-secret-0123456789";
const cases = [
	{ name: "compact", strategy: "compact", baseURL: "http://localhost:3000" },
	{ name: "jwt", strategy: "jwt", baseURL: "http://localhost:3000" },
	{ name: "jwe", strategy: "jwe", baseURL: "http://localhost:3000" },
	{ name: "jwe-https", strategy: "jwe", baseURL: "https://app.example.com" },
	// A name long enough that Better Auth splits the cache into chunks.
	{ name: "compact-chunked", strategy: "compact", baseURL: "http://localhost:3000", userName: "Ada ".repeat(1500) },
	// A name JSON.stringify escapes in its own way (quotes, backslash,
	// control characters; not <, >, &, U+2028 or non-ASCII), which the
	// compact strategy's signature covers.
	{ name: "compact-escapes", strategy: "compact", baseURL: "http://localhost:3000", userName: "Ada \"Countess\" \\ <&> \u2028 \u0001\t\n é 😀 \u007f" },
	{ name: "none", strategy: null, baseURL: "http://localhost:3000" },
];

const out = { note: "made by testdata/betterauth-fixture.mjs with better-auth " + (await import(new URL("../interop/betterauth/node_modules/better-auth/package.json", import.meta.url), { with: { type: "json" } })).default.version, cases: [] };
for (const c of cases) {
	const db = { user: [], session: [], account: [], verification: [] };
	const auth = betterAuth({
		secret,
		baseURL: c.baseURL,
		database: memoryAdapter(db),
		emailAndPassword: { enabled: true },
		session: c.strategy ? { cookieCache: { enabled: true, strategy: c.strategy } } : {},
		telemetry: { enabled: false },
		logger: { disabled: true },
	});
	const res = await auth.handler(new Request(c.baseURL + "/api/auth/sign-up/email", {
		method: "POST",
		headers: { "content-type": "application/json", origin: c.baseURL },
		body: JSON.stringify({ email: "Ada@Example.com", password: "correct horse battery", name: c.userName ?? "Ada Lovelace", image: "https://example.com/ada.png" }),
	}));
	const now = Date.now(); // after the cookies were made
	if (res.status !== 200) throw new Error(`${c.name}: sign-up answered ${res.status}: ${await res.text()}`);
	const cookies = res.headers.getSetCookie().map((sc) => sc.split(";")[0]);
	out.cases.push({ name: c.name, strategy: c.strategy ?? "", secure: c.baseURL.startsWith("https:"), secret, now, cookies, user: db.user[0], session: db.session[0] });
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
