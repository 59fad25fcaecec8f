// betterauth-password.mjs runs Better Auth's own password hashing
// (better-auth/crypto's hashPassword and verifyPassword, pinned in
// ../interop/betterauth) for ../betterauth_password_test.go. It reads
//
//   {"hash": ["password", ...], "verify": [{"hash": "...", "password": "..."}, ...]}
//
// on stdin and prints {"version": better-auth's version, "hashes": [the
// hash of each password], "verified": [verifyPassword's answer for each
// pair, or its error as a string]}.
const { hashPassword, verifyPassword } = await import(new URL("../interop/betterauth/crypto.mjs", import.meta.url));
const { version } = (await import(new URL("../interop/betterauth/node_modules/better-auth/package.json", import.meta.url), { with: { type: "json" } })).default;

let input = "";
for await (const chunk of process.stdin) input += chunk;
const req = JSON.parse(input);

const hashes = await Promise.all((req.hash ?? []).map((password) => hashPassword(password)));
const verified = await Promise.all((req.verify ?? []).map(({ hash, password }) =>
	verifyPassword({ hash, password }).catch((err) => String(err))));
process.stdout.write(JSON.stringify({ version, hashes, verified }));
