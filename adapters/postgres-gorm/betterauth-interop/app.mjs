// app.mjs is the JS side of the SQL rows of the Better Auth interop suite
// (conformance/interop/betterauth, ../interop_betterauth_test.go): a
// betterAuth() app on the database the Go side made, its tables created by
// Better Auth's own migrate (getMigrations), as `npx @better-auth/cli
// migrate` does. One process serves one row.
//
// "$open" config: {"dialect": "postgres"|"mysql"|"sqlite", "url": "…",
// "schema": "…" (PostgreSQL search_path), "secret": "…", "options": {…}};
// the answer is {"ddl": "…"}, the SQL the migration ran.
// serve-betterauth.mjs ships inside the Go package
// conformance/interop/betterauth, whose Start names it in
// AUTHPORT_SERVE_BETTERAUTH.
const { serveBetterAuth } = await import(process.env.AUTHPORT_SERVE_BETTERAUTH || "betterauth.Start sets AUTHPORT_SERVE_BETTERAUTH");
const { betterAuth } = await import("better-auth");
const { getMigrations } = await import("better-auth/db/migration");

async function database(cfg) {
  if (cfg.dialect === "postgres") {
    const pg = (await import("pg")).default;
    const pool = new pg.Pool({ connectionString: cfg.url, options: `-c search_path=${cfg.schema}`, max: 10 });
    return { database: pool, close: () => pool.end() };
  }
  if (cfg.dialect === "mysql") {
    const mysql = (await import("mysql2/promise")).default;
    const pool = mysql.createPool({ uri: cfg.url, connectionLimit: 10, timezone: "Z" });
    return { database: pool, close: () => pool.end() };
  }
  if (cfg.dialect === "sqlite") {
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(cfg.url);
    db.pragma("journal_mode = WAL");
    db.pragma(`busy_timeout = ${Number(cfg.busyTimeoutMs ?? 10000)}`);
    db.pragma("foreign_keys = ON");
    return { database: db, close: () => db.close() };
  }
  throw new Error(`unknown dialect ${cfg.dialect}`);
}

serveBetterAuth(async (cfg, options) => {
  const { database: db, close } = await database(cfg);
  const auth = betterAuth({ ...options, database: db });
  const { compileMigrations, runMigrations } = await getMigrations(auth.options);
  const ddl = await compileMigrations();
  await runMigrations();
  return { auth, close, info: { ddl } };
});
