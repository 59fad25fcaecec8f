-- authport schema for MariaDB ≥ 10.2 (adapters/postgres-gorm), default names.
-- Equivalent to Adapter.Migrate on MariaDB: a test checks that both give the
-- same columns, types, nullability, collations, constraints and indexes.
-- Strings use utf8mb4_nopad_bin: compared byte for byte, trailing spaces
-- significant. Times are DATETIME(3) in UTC. For MySQL 8,
-- gormadapter.SchemaSQL("mysql") gives this file with MySQL 8's collation.

-- email and username are NULL for a user without one, and each is unique among
-- the users that have one (a unique key allows any number of NULLs).
-- A users table made by an earlier version has email NOT NULL and no
-- username: Adapter.Migrate changes both, or run
--   ALTER TABLE `users` MODIFY `email` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
--     ADD COLUMN `username` VARCHAR(255), ADD CONSTRAINT `users_username_key` UNIQUE (`username`)
CREATE TABLE IF NOT EXISTS `users` (
  `id`            VARCHAR(255) NOT NULL,
  `email`         VARCHAR(255),
  `emailVerified` DATETIME(3),
  `name`          TEXT,
  `image`         TEXT,
  `username`      VARCHAR(255), -- lowercase (core.NormalizeUsername)
  CONSTRAINT `users_pkey` PRIMARY KEY (`id`),
  CONSTRAINT `users_email_key` UNIQUE (`email`),
  CONSTRAINT `users_username_key` UNIQUE (`username`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- password is a password account's hash (type 'credentials', provider
-- 'credential'), NULL on every other account. An accounts table made by an
-- earlier version lacks it: Adapter.Migrate adds it, or run
--   ALTER TABLE `accounts` ADD COLUMN `password` TEXT
CREATE TABLE IF NOT EXISTS `accounts` (
  `userId`                VARCHAR(255) NOT NULL,
  `type`                  VARCHAR(255) NOT NULL,
  `provider`              VARCHAR(255) NOT NULL,
  `providerAccountId`     VARCHAR(255) NOT NULL,
  `access_token`          TEXT,
  `authorization_details` TEXT,   -- JSON array, NULL when absent
  `expires_at`            BIGINT, -- seconds since the Unix epoch
  `expires_in`            BIGINT,
  `id_token`              TEXT,
  `refresh_token`         TEXT,
  `scope`                 TEXT,
  `token_type`            TEXT,   -- lowercase
  `session_state`         TEXT,
  `password`              TEXT,   -- PHC string, e.g. $argon2id$…
  CONSTRAINT `accounts_pkey` PRIMARY KEY (`provider`, `providerAccountId`),
  CONSTRAINT `accounts_userId_fkey` FOREIGN KEY (`userId`)
    REFERENCES `users` (`id`) ON DELETE CASCADE,
  INDEX `accounts_userId_idx` (`userId`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- createdAt, updatedAt, ipAddress and userAgent are the session's metadata
-- (listed by listSessionsByUserId), NULL when unknown. A sessions table made
-- by an earlier version lacks them: Adapter.Migrate adds them, or run
--   ALTER TABLE `sessions` ADD COLUMN IF NOT EXISTS `createdAt` DATETIME(3),
--     ADD COLUMN IF NOT EXISTS `updatedAt` DATETIME(3),
--     ADD COLUMN IF NOT EXISTS `ipAddress` TEXT,
--     ADD COLUMN IF NOT EXISTS `userAgent` TEXT
-- (MySQL: without IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS `sessions` (
  `sessionToken` VARCHAR(255) NOT NULL,
  `userId`       VARCHAR(255) NOT NULL,
  `expires`      DATETIME(3) NOT NULL,
  `createdAt`    DATETIME(3),
  `updatedAt`    DATETIME(3),
  `ipAddress`    TEXT,
  `userAgent`    TEXT,
  CONSTRAINT `sessions_pkey` PRIMARY KEY (`sessionToken`),
  CONSTRAINT `sessions_userId_fkey` FOREIGN KEY (`userId`)
    REFERENCES `users` (`id`) ON DELETE CASCADE,
  INDEX `sessions_userId_idx` (`userId`),
  INDEX `sessions_expires_idx` (`expires`) -- for PurgeExpired
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS `verification_token` (
  `identifier` VARCHAR(255) NOT NULL,
  `token`      VARCHAR(255) NOT NULL,
  `expires`    DATETIME(3) NOT NULL,
  CONSTRAINT `verification_token_pkey` PRIMARY KEY (`identifier`, `token`),
  INDEX `verification_token_expires_idx` (`expires`) -- for PurgeExpired
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS `authenticators` (
  `credentialID`         VARCHAR(768) NOT NULL,
  `userId`               VARCHAR(255) NOT NULL,
  `providerAccountId`    VARCHAR(255) NOT NULL,
  `credentialPublicKey`  TEXT NOT NULL,
  `counter`              BIGINT NOT NULL,
  `credentialDeviceType` VARCHAR(255) NOT NULL,
  `credentialBackedUp`   BOOLEAN NOT NULL,
  `transports`           TEXT,
  CONSTRAINT `authenticators_pkey` PRIMARY KEY (`credentialID`),
  CONSTRAINT `authenticators_userId_fkey` FOREIGN KEY (`userId`)
    REFERENCES `users` (`id`) ON DELETE CASCADE,
  INDEX `authenticators_userId_idx` (`userId`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- A user's second factors (core.Factor). secret holds opaque bytes (at most
-- 4096, zero bytes for none, never NULL: swapFactor compares it). step is
-- the last accepted time step of a TOTP factor. A database made before
-- second factors gets the table from Adapter.Migrate, or from this statement.
CREATE TABLE IF NOT EXISTS `factors` (
  `id`         VARCHAR(255) NOT NULL,
  `userId`     VARCHAR(255) NOT NULL,
  `type`       VARCHAR(255) NOT NULL,
  `name`       TEXT NOT NULL,
  `secret`     BLOB NOT NULL,
  `step`       BIGINT NOT NULL,
  `createdAt`  DATETIME(3) NOT NULL,
  `lastUsedAt` DATETIME(3),
  CONSTRAINT `factors_pkey` PRIMARY KEY (`id`),
  CONSTRAINT `factors_userId_fkey` FOREIGN KEY (`userId`)
    REFERENCES `users` (`id`) ON DELETE CASCADE,
  INDEX `factors_userId_idx` (`userId`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
