// betterauth-app.mjs runs Better Auth's own betterAuth() (pinned in
// ../interop/betterauth) on its memory adapter, for the Go tests of
// ../betterauth_test.go. It reads one JSON object on stdin:
//
//   {"secret": "...", "baseURL": "http://localhost:3000",
//    "cookieCache": null | {"strategy": "compact"|"jwt"|"jwe", "maxAge": 300, "version": "1"},
//    "seed": {"user": [...], "session": [...], "account": [...]},
//    "requests": [{"method": "POST", "path": "/sign-up/email", "cookie": "...", "body": {...}}, ...]}
//
// A request with "cookiesFrom": i (instead of "cookie") sends the cookies
// that the answer to request i set.
//
// seed rows are Better Auth's records, their *At fields as ISO strings. It
// sends each request to auth.handler under /api/auth, in order, and prints
// one answer a request: {"status", "setCookies", "body"}, then the memory
// database as it is at the end under "db".
const { betterAuth, memoryAdapter } = await import(new URL("../interop/betterauth/index.mjs", import.meta.url));

let input = "";
for await (const chunk of process.stdin) input += chunk;
const cfg = JSON.parse(input);

const revive = (row) => {
	const out = { ...row };
	for (const [k, v] of Object.entries(out)) {
		if (k.endsWith("At") && typeof v === "string") out[k] = new Date(v);
	}
	return out;
};
const db = { user: [], session: [], account: [], verification: [] };
for (const [model, rows] of Object.entries(cfg.seed ?? {})) db[model] = rows.map(revive);

const auth = betterAuth({
	secret: cfg.secret,
	baseURL: cfg.baseURL,
	database: memoryAdapter(db),
	emailAndPassword: { enabled: true },
	session: cfg.cookieCache ? { cookieCache: { enabled: true, ...cfg.cookieCache } } : {},
	telemetry: { enabled: false },
	logger: { disabled: true },
});

const answers = [];
for (const r of cfg.requests ?? []) {
	const headers = new Headers();
	const cookie = r.cookiesFrom !== undefined
		? answers[r.cookiesFrom].setCookies.map((sc) => sc.split(";")[0]).filter((nv) => !nv.endsWith("=")).join("; ")
		: r.cookie;
	if (cookie) headers.set("cookie", cookie);
	let body;
	if (r.body !== undefined) {
		headers.set("content-type", "application/json");
		body = JSON.stringify(r.body);
	}
	headers.set("origin", cfg.baseURL);
	const res = await auth.handler(new Request(cfg.baseURL + "/api/auth" + r.path, { method: r.method, headers, body }));
	answers.push({ status: res.status, setCookies: res.headers.getSetCookie(), body: await res.text() });
}
process.stdout.write(JSON.stringify({ answers, db }));
