// driver.mjs is the JS side of the SQL pairings of the Auth.js interop
// suite (conformance/interop, ../interop_test.go): it opens one of Auth.js's
// own SQL adapters, served by the suite's one JSON-lines loop
// (conformance/nodeproc/serve-adapter.mjs). One process serves one test.
//
// "$open" config: {"adapter":"drizzle","dialect":"postgres","url":"…","schema":"…","ddl":true};
// the answer is {"ddl": [...]}, the statements that created the tables.
//
// With "ddl" it first creates the tables the way a Node user of that
// adapter would: the SQL the adapter's documentation gives (pg, kysely) or
// the SQL drizzle-kit generates from the adapter's own default tables
// (drizzle); an array of statements is run as given.
// serve-adapter.mjs ships inside the Go package conformance/nodeproc, whose
// Start writes it out and names it in AUTHPORT_SERVE_ADAPTER.
const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER || "nodeproc.Start sets AUTHPORT_SERVE_ADAPTER");



async function open(cfg) {
  const { adapter: kind, dialect } = cfg;
  const closers = [];
  let ddl = [];
  const close = async () => {
    for (const c of closers) await c();
  };
  if (kind === "pg") {
    const { default: PostgresAdapter } = await import("@auth/pg-adapter");
    const pg = (await import("pg")).default;
    const pool = new pg.Pool({ connectionString: cfg.url, options: `-c search_path=${cfg.schema}`, max: 10 });
    closers.push(() => pool.end());
    if (cfg.ddl) {
      ddl = cfg.ddl;
      for (const s of cfg.ddl) await pool.query(s);
    }
    return { adapter: PostgresAdapter(pool), close, info: { ddl } };
  }
  if (kind === "drizzle") {
    const { DrizzleAdapter } = await import("@auth/drizzle-adapter");
    const kit = await import("drizzle-kit/api");
    let db, tables, statements;
    if (dialect === "postgres") {
      const { defineTables } = await import("./node_modules/@auth/drizzle-adapter/lib/pg.js");
      const { drizzle } = await import("drizzle-orm/node-postgres");
      const pg = (await import("pg")).default;
      const pool = new pg.Pool({ connectionString: cfg.url, options: `-c search_path=${cfg.schema}`, max: 10 });
      closers.push(() => pool.end());
      tables = defineTables();
      db = drizzle(pool);
      const cur = kit.generateDrizzleJson(tables);
      // drizzle-kit qualifies names with "public"; the suite's tables live
      // in a schema of their own, reached through search_path.
      statements = (await kit.generateMigration(kit.generateDrizzleJson({}), cur)).map((s) => s.replaceAll('"public".', ""));
      if (cfg.ddl) for (const s of statements) await pool.query(s);
    } else if (dialect === "mysql") {
      const { defineTables } = await import("./node_modules/@auth/drizzle-adapter/lib/mysql.js");
      const { drizzle } = await import("drizzle-orm/mysql2");
      const mysql = (await import("mysql2/promise")).default;
      const pool = mysql.createPool({ uri: cfg.url, connectionLimit: 10, timezone: "Z" });
      closers.push(() => pool.end());
      tables = defineTables();
      db = drizzle(pool, { mode: "default" });
      const cur = await kit.generateMySQLDrizzleJson(tables);
      statements = await kit.generateMySQLMigration(await kit.generateMySQLDrizzleJson({}), cur);
      if (cfg.ddl) for (const s of statements) await pool.query(s);
    } else {
      const { defineTables } = await import("./node_modules/@auth/drizzle-adapter/lib/sqlite.js");
      const { drizzle } = await import("drizzle-orm/libsql");
      const { createClient } = await import("@libsql/client");
      const client = createClient({ url: cfg.url });
      closers.push(() => client.close());
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute(`PRAGMA busy_timeout = ${Number(cfg.busyTimeoutMs ?? 10000)}`);
      await client.execute("PRAGMA foreign_keys = ON");
      tables = defineTables();
      db = drizzle(client);
      const cur = await kit.generateSQLiteDrizzleJson(tables);
      statements = await kit.generateSQLiteMigration(await kit.generateSQLiteDrizzleJson({}), cur);
      if (cfg.ddl) for (const s of statements) await client.execute(s);
    }
    return { adapter: DrizzleAdapter(db, tables), close, info: { ddl: statements } };
  }
  if (kind === "kysely") {
    const { KyselyAdapter } = await import("@auth/kysely-adapter");
    const { Kysely, PostgresDialect, MysqlDialect, sql } = await import("kysely");
    let dialectObj;
    if (dialect === "postgres") {
      const pg = (await import("pg")).default;
      dialectObj = new PostgresDialect({
        pool: new pg.Pool({ connectionString: cfg.url, options: `-c search_path=${cfg.schema}`, max: 10 }),
      });
    } else if (dialect === "mysql") {
      const mysql = (await import("mysql2")).default;
      dialectObj = new MysqlDialect({ pool: mysql.createPool({ uri: cfg.url, connectionLimit: 10, timezone: "Z" }) });
    } else {
      const { LibsqlDialect } = await import("@libsql/kysely-libsql");
      dialectObj = new LibsqlDialect({ url: cfg.url });
    }
    const db = new Kysely({ dialect: dialectObj });
    closers.push(() => db.destroy());
    if (dialect === "sqlite") {
      await sql`PRAGMA journal_mode = WAL`.execute(db);
      await sql.raw(`PRAGMA busy_timeout = ${Number(cfg.busyTimeoutMs ?? 10000)}`).execute(db);
      await sql`PRAGMA foreign_keys = ON`.execute(db);
    }
    if (cfg.ddl) ddl = await kyselySchema(db, dialect, sql);
    return { adapter: KyselyAdapter(db), close, info: { ddl } };
  }
  throw new Error(`unknown adapter ${kind}`);
}

// kyselySchema creates the tables of @auth/kysely-adapter's documentation
// and of its own test suite (authjs.dev/getting-started/adapters/kysely),
// per dialect: uuid ids (varchar(36) with UUID() on MySQL, varchar on
// SQLite), timestamptz dates (DATETIME(3) on MySQL), varchar(255) text on
// MySQL, no id columns on Account and Session.
async function kyselySchema(db, dialect, sql) {
  const compiled = [];
  const run = async (b) => {
    compiled.push(b.compile().sql);
    await b.execute();
  };
  const defaultTimestamp = { postgres: sql`NOW()`, mysql: sql`NOW(3)`, sqlite: sql`CURRENT_TIMESTAMP` }[dialect];
  const uuidColumnType = dialect === "mysql" ? "varchar(36)" : "uuid";
  const dateColumnType = dialect === "mysql" ? sql`DATETIME(3)` : "timestamptz";
  const textColumnType = dialect === "mysql" ? "varchar(255)" : "text";
  const withId = (name) => {
    const b = db.schema.createTable(name);
    if (dialect === "postgres") return b.addColumn("id", "uuid", (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`));
    if (dialect === "mysql") return b.addColumn("id", "varchar(36)", (col) => col.primaryKey().defaultTo(sql`(UUID())`));
    return b.addColumn("id", "varchar", (col) => col.primaryKey());
  };
  await run(
    withId("User")
      .addColumn("name", textColumnType)
      .addColumn("email", textColumnType, (col) => col.unique().notNull())
      .addColumn("emailVerified", dateColumnType, (col) => col.defaultTo(defaultTimestamp))
      .addColumn("image", textColumnType),
  );
  let account = db.schema
    .createTable("Account")
    .addColumn("userId", uuidColumnType, (col) => col.references("User.id").onDelete("cascade").notNull())
    .addColumn("type", textColumnType, (col) => col.notNull())
    .addColumn("provider", textColumnType, (col) => col.notNull())
    .addColumn("providerAccountId", textColumnType, (col) => col.notNull())
    .addColumn("refresh_token", textColumnType)
    .addColumn("access_token", textColumnType)
    .addColumn("expires_at", "bigint")
    .addColumn("token_type", textColumnType)
    .addColumn("scope", textColumnType)
    .addColumn("id_token", textColumnType)
    .addColumn("session_state", textColumnType);
  if (dialect === "mysql")
    account = account.addForeignKeyConstraint("Account_userId_fk", ["userId"], "User", ["id"], (cb) => cb.onDelete("cascade"));
  await run(account);
  let session = db.schema
    .createTable("Session")
    .addColumn("userId", uuidColumnType, (col) => col.references("User.id").onDelete("cascade").notNull())
    .addColumn("sessionToken", textColumnType, (col) => col.notNull().unique())
    .addColumn("expires", dateColumnType, (col) => col.notNull());
  if (dialect === "mysql")
    session = session.addForeignKeyConstraint("Session_userId_fk", ["userId"], "User", ["id"], (cb) => cb.onDelete("cascade"));
  await run(session);
  await run(
    db.schema
      .createTable("VerificationToken")
      .addColumn("identifier", textColumnType, (col) => col.notNull())
      .addColumn("token", textColumnType, (col) => col.notNull().unique())
      .addColumn("expires", dateColumnType, (col) => col.notNull()),
  );
  await run(db.schema.createIndex("Account_userId_index").on("Account").column("userId"));
  return compiled;
}

serve(open);
