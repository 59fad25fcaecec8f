// verify.mjs JWKS_URL ISSUER AUDIENCE TOKEN… — verifies each access token
// with jose's createRemoteJWKSet and jwtVerify (typ at+jwt, issuer,
// audience, exp) and prints one JSON line per token: {"ok":true,"sub":…}
// or {"ok":false,"error":code}.
import { createRemoteJWKSet, jwtVerify } from "jose";

const [jwksURL, issuer, audience, ...tokens] = process.argv.slice(2);
const jwks = createRemoteJWKSet(new URL(jwksURL), { cacheMaxAge: 0, cooldownDuration: 0 });
for (const token of tokens) {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer, audience, typ: "at+jwt", algorithms: ["EdDSA", "ES256"],
    });
    console.log(JSON.stringify({ ok: true, sub: payload.sub, alg: protectedHeader.alg, kid: protectedHeader.kid }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, error: e.code || String(e) }));
  }
}
