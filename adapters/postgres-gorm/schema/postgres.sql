-- authport schema for PostgreSQL (adapters/postgres-gorm), default names.
-- Equivalent to Adapter.Migrate on PostgreSQL: a test checks that both give
-- the same columns, types, nullability, constraints and indexes.
-- Names follow Auth.js's pg adapter. Times are UTC, kept to the millisecond.

-- email and username are NULL for a user without one, and each is unique among
-- the users that have one (a unique constraint allows any number of NULLs).
-- A users table made by an earlier version has email NOT NULL and no
-- username: Adapter.Migrate changes both, or run
--   ALTER TABLE "users" ALTER COLUMN "email" DROP NOT NULL,
--     ADD COLUMN IF NOT EXISTS "username" TEXT CONSTRAINT "users_username_key" UNIQUE
CREATE TABLE IF NOT EXISTS "users" (
  "id"            TEXT NOT NULL,
  "email"         TEXT,
  "emailVerified" TIMESTAMPTZ(3),
  "name"          TEXT,
  "image"         TEXT,
  "username"      TEXT, -- lowercase (core.NormalizeUsername)
  CONSTRAINT "users_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "users_email_key" UNIQUE ("email"),
  CONSTRAINT "users_username_key" UNIQUE ("username")
);

-- password is a password account's hash (type 'credentials', provider
-- 'credential'), NULL on every other account. An accounts table made by an
-- earlier version lacks it: Adapter.Migrate adds it, or run
--   ALTER TABLE "accounts" ADD COLUMN IF NOT EXISTS "password" TEXT
CREATE TABLE IF NOT EXISTS "accounts" (
  "userId"                TEXT NOT NULL,
  "type"                  TEXT NOT NULL,
  "provider"              TEXT NOT NULL,
  "providerAccountId"     TEXT NOT NULL,
  "access_token"          TEXT,
  "authorization_details" TEXT,   -- JSON array, NULL when absent
  "expires_at"            BIGINT, -- seconds since the Unix epoch
  "expires_in"            BIGINT,
  "id_token"              TEXT,
  "refresh_token"         TEXT,
  "scope"                 TEXT,
  "token_type"            TEXT,   -- lowercase
  "session_state"         TEXT,
  "password"              TEXT,   -- PHC string, e.g. $argon2id$…
  CONSTRAINT "accounts_pkey" PRIMARY KEY ("provider", "providerAccountId"),
  CONSTRAINT "accounts_userId_fkey" FOREIGN KEY ("userId")
    REFERENCES "users" ("id") ON DELETE CASCADE
);

-- createdAt, updatedAt, ipAddress and userAgent are the session's metadata
-- (listed by listSessionsByUserId), NULL when unknown. A sessions table made
-- by an earlier version lacks them: Adapter.Migrate adds them, or run
--   ALTER TABLE "sessions" ADD COLUMN IF NOT EXISTS "createdAt" TIMESTAMPTZ(3),
--     ADD COLUMN IF NOT EXISTS "updatedAt" TIMESTAMPTZ(3),
--     ADD COLUMN IF NOT EXISTS "ipAddress" TEXT,
--     ADD COLUMN IF NOT EXISTS "userAgent" TEXT
CREATE TABLE IF NOT EXISTS "sessions" (
  "sessionToken" TEXT NOT NULL,
  "userId"       TEXT NOT NULL,
  "expires"      TIMESTAMPTZ(3) NOT NULL,
  "createdAt"    TIMESTAMPTZ(3),
  "updatedAt"    TIMESTAMPTZ(3),
  "ipAddress"    TEXT,
  "userAgent"    TEXT,
  CONSTRAINT "sessions_pkey" PRIMARY KEY ("sessionToken"),
  CONSTRAINT "sessions_userId_fkey" FOREIGN KEY ("userId")
    REFERENCES "users" ("id") ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS "verification_token" (
  "identifier" TEXT NOT NULL,
  "token"      TEXT NOT NULL,
  "expires"    TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "verification_token_pkey" PRIMARY KEY ("identifier", "token")
);

CREATE TABLE IF NOT EXISTS "authenticators" (
  "credentialID"         TEXT NOT NULL,
  "userId"               TEXT NOT NULL,
  "providerAccountId"    TEXT NOT NULL,
  "credentialPublicKey"  TEXT NOT NULL,
  "counter"              BIGINT NOT NULL,
  "credentialDeviceType" TEXT NOT NULL,
  "credentialBackedUp"   BOOLEAN NOT NULL,
  "transports"           TEXT,
  CONSTRAINT "authenticators_pkey" PRIMARY KEY ("credentialID"),
  CONSTRAINT "authenticators_userId_fkey" FOREIGN KEY ("userId")
    REFERENCES "users" ("id") ON DELETE CASCADE
);

-- A user's second factors (core.Factor). secret holds opaque bytes (at most
-- 4096, zero bytes for none, never NULL: swapFactor compares it). step is
-- the last accepted time step of a TOTP factor. A database made before
-- second factors gets the table from Adapter.Migrate, or from this statement
-- and the index below.
CREATE TABLE IF NOT EXISTS "factors" (
  "id"         TEXT NOT NULL,
  "userId"     TEXT NOT NULL,
  "type"       TEXT NOT NULL,
  "name"       TEXT NOT NULL,
  "secret"     BYTEA NOT NULL,
  "step"       BIGINT NOT NULL,
  "createdAt"  TIMESTAMPTZ(3) NOT NULL,
  "lastUsedAt" TIMESTAMPTZ(3),
  CONSTRAINT "factors_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "factors_userId_fkey" FOREIGN KEY ("userId")
    REFERENCES "users" ("id") ON DELETE CASCADE
);

CREATE INDEX IF NOT EXISTS "accounts_userId_idx" ON "accounts" ("userId");
-- sessions_userId_idx serves listSessionsByUserId and deleteSessionsByUserId.
CREATE INDEX IF NOT EXISTS "sessions_userId_idx" ON "sessions" ("userId");
-- The expires indexes let PurgeExpired find each batch of expired rows
-- without reading the whole table.
CREATE INDEX IF NOT EXISTS "sessions_expires_idx" ON "sessions" ("expires");
CREATE INDEX IF NOT EXISTS "verification_token_expires_idx" ON "verification_token" ("expires");
CREATE INDEX IF NOT EXISTS "authenticators_userId_idx" ON "authenticators" ("userId");
-- factors_userId_idx serves listFactorsByUserId.
CREATE INDEX IF NOT EXISTS "factors_userId_idx" ON "factors" ("userId");
