// betterauth-scrypt.mjs makes betterauth-scrypt.json: password hashes made
// by Better Auth's own hashPassword (better-auth/crypto, the version pinned
// in handler/interop/betterauth/package-lock.json), for the known-answer
// tests of ../betterauth.go, which run without Node. Regenerate with
//
//   (cd handler/interop/betterauth && npm ci)
//   node core/password/testdata/betterauth-scrypt.mjs > core/password/testdata/betterauth-scrypt.json
//
// Each case is a password as typed and the hash Better Auth stored for it;
// "nfkc" is the password after String.prototype.normalize("NFKC"), which
// Better Auth applies before scrypt. Every hash is checked with Better
// Auth's verifyPassword before it is written.
const ba = new URL("../../../handler/interop/betterauth/node_modules/better-auth/", import.meta.url);
const { hashPassword, verifyPassword } = await import(new URL("dist/crypto/index.mjs", ba));
const version = (await import(new URL("package.json", ba), { with: { type: "json" } })).default.version;

const passwords = [
	["ascii", "correct horse battery staple"],
	["ascii-again", "correct horse battery staple"], // another salt
	["short", "hunter22"],
	["combining-accent", "cafe\u0301 au lait"], // NFKC composes é
	["precomposed", "caf\u00e9 au lait"],
	["ligature", "\ufb01nance \ufb01le"], // ﬁ → fi
	["fullwidth", "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff11\uff12\uff13"],
	["emoji-zwj", "\u{1f511} open sesame \u{1f468}\u200d\u{1f469}\u200d\u{1f467}"],
	["arabic-ligature", "\ufdfa salaam"], // NFKC expands to 18 code points
	["tab", "tab\there"], // Better Auth accepts control characters; authport's Normalize does not
	["empty", ""],
	["128", "x".repeat(64) + "\u00e9".repeat(64)],
];

const cases = [];
for (const [name, password] of passwords) {
	const hash = await hashPassword(password);
	if (!(await verifyPassword({ hash, password }))) throw new Error(`${name}: verifyPassword refused its own hash`);
	cases.push({ name, password, nfkc: password.normalize("NFKC"), hash });
}
process.stdout.write(JSON.stringify({ note: `made by testdata/betterauth-scrypt.mjs with better-auth ${version} on Node ${process.version}`, cases }, null, "\t") + "\n");
