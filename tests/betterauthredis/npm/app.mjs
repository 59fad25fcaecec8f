// app.mjs is the JS side of the Redis row of the Better Auth interop suite
// (conformance/interop/betterauth, ../interop_test.go): a betterAuth() app
// on PostgreSQL (a pg Pool), its tables made by Better Auth's own migrate,
// with secondaryStorage on Redis (ioredis), every key under a prefix.
// Sessions and verification values then live in Redis, users and accounts
// in PostgreSQL. One process serves one row.
//
// "$open" config: {"url": the PostgreSQL URL, "schema": the search_path,
// "redis": the Redis URL, "prefix": the key prefix, "secret", "options"};
// the answer is {"ddl": "…"}, the SQL the migration ran.
const { serveBetterAuth } = await import(process.env.AUTHPORT_SERVE_BETTERAUTH || "betterauth.Start sets AUTHPORT_SERVE_BETTERAUTH");
const { betterAuth } = await import("better-auth");
const { getMigrations } = await import("better-auth/db/migration");
const pg = (await import("pg")).default;
const Redis = (await import("ioredis")).default;

// secondaryStorage as an app writes it over ioredis: each key under the
// prefix, TTLs in seconds, getAndDelete one GETDEL, increment with the TTL
// set on creation only (Better Auth's contract).
function secondaryStorage(redis, prefix) {
  const k = (key) => prefix + key;
  return {
    get: (key) => redis.get(k(key)),
    set: (key, value, ttl) => (ttl ? redis.set(k(key), value, "EX", ttl) : redis.set(k(key), value)),
    delete: (key) => redis.del(k(key)).then(() => null),
    getAndDelete: (key) => redis.getdel(k(key)),
    increment: (key, ttl) =>
      redis.eval("local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return n", 1, k(key), ttl),
  };
}

serveBetterAuth(async (cfg, options) => {
  const db = new pg.Pool({ connectionString: cfg.url, options: `-c search_path=${cfg.schema}`, max: 10 });
  const redis = new Redis(cfg.redis, { maxRetriesPerRequest: 2 });
  const auth = betterAuth({ ...options, database: db, secondaryStorage: secondaryStorage(redis, cfg.prefix) });
  const { compileMigrations, runMigrations } = await getMigrations(auth.options);
  const ddl = await compileMigrations();
  await runMigrations();
  return {
    auth,
    close: async () => {
      await redis.quit();
      await db.end();
    },
    info: { ddl },
  };
});
