// betterauth-app.mjs runs Better Auth's own betterAuth() (pinned in
// ../interop/betterauth) on its memory adapter, for the Go tests of
// ../betterauth_test.go. It reads a JSON list of apps on stdin, each
//
//   {"secret": "...", "secrets": [{"version": 2, "value": "..."}, ...] (optional),
//    "baseURL": "http://localhost:3000",
//    "cookieCache": null | {"strategy": "compact"|"jwt"|"jwe", "maxAge": 300, "version": "1"},
//    "seed": {"user": [...], "session": [...], "account": [...]},
//    "requests": [{"method": "POST", "path": "/sign-up/email", "cookie": "...", "body": {...}}, ...]}
//
// seed rows are Better Auth's records, their *At fields as ISO strings. A
// request with "cookiesFrom": i (instead of "cookie") sends the cookies
// that the answer to the app's request i set. For each app it builds a
// betterAuth() on its own memory database, sends each request to
// auth.handler under /api/auth, in order, and prints one result an app:
// {"answers": [{"status", "setCookies", "body"}, ...], "db": the database
// at the end}. One process serves them all: loading Better Auth is most of
// the time.
const { betterAuth, memoryAdapter } = await import(new URL("../interop/betterauth/index.mjs", import.meta.url));

let input = "";
for await (const chunk of process.stdin) input += chunk;

const revive = (row) => {
	const out = { ...row };
	for (const [k, v] of Object.entries(out)) {
		if (k.endsWith("At") && typeof v === "string") out[k] = new Date(v);
	}
	return out;
};

const results = [];
for (const cfg of JSON.parse(input)) {
	const db = { user: [], session: [], account: [], verification: [] };
	for (const [model, rows] of Object.entries(cfg.seed ?? {})) db[model] = rows.map(revive);
	const auth = betterAuth({
		secret: cfg.secret,
		...(cfg.secrets ? { secrets: cfg.secrets } : {}),
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
	results.push({ answers, db });
}
process.stdout.write(JSON.stringify(results));
