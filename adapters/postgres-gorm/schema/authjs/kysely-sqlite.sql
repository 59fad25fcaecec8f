-- The tables of Auth.js's kysely adapter on sqlite, as the Node side of
-- TestInteropAuthJS creates them with the versions pinned in interop/package.json
-- (regenerate: go test -run TestInteropAuthJS -update-authjs-ddl). Use with gormadapter.AuthJSKysely().

create table "User" ("id" varchar primary key, "name" text, "email" text not null unique, "emailVerified" timestamptz default CURRENT_TIMESTAMP, "image" text);

create table "Account" ("userId" uuid not null references "User" ("id") on delete cascade, "type" text not null, "provider" text not null, "providerAccountId" text not null, "refresh_token" text, "access_token" text, "expires_at" bigint, "token_type" text, "scope" text, "id_token" text, "session_state" text);

create table "Session" ("userId" uuid not null references "User" ("id") on delete cascade, "sessionToken" text not null unique, "expires" timestamptz not null);

create table "VerificationToken" ("identifier" text not null, "token" text not null unique, "expires" timestamptz not null);

create index "Account_userId_index" on "Account" ("userId");
