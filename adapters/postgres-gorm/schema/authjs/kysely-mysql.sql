-- The tables of Auth.js's kysely adapter on mysql, as the Node side of
-- TestInteropAuthJS creates them with the versions pinned in interop/package.json
-- (regenerate: go test -run TestInteropAuthJS -update-authjs-ddl). Use with gormadapter.AuthJSKysely().

create table `User` (`id` varchar(36) default (UUID()) primary key, `name` varchar(255), `email` varchar(255) not null unique, `emailVerified` DATETIME(3) default NOW(3), `image` varchar(255));

create table `Account` (`userId` varchar(36) not null references `User` (`id`) on delete cascade, `type` varchar(255) not null, `provider` varchar(255) not null, `providerAccountId` varchar(255) not null, `refresh_token` varchar(255), `access_token` varchar(255), `expires_at` bigint, `token_type` varchar(255), `scope` varchar(255), `id_token` varchar(255), `session_state` varchar(255), constraint `Account_userId_fk` foreign key (`userId`) references `User` (`id`) on delete cascade);

create table `Session` (`userId` varchar(36) not null references `User` (`id`) on delete cascade, `sessionToken` varchar(255) not null unique, `expires` DATETIME(3) not null, constraint `Session_userId_fk` foreign key (`userId`) references `User` (`id`) on delete cascade);

create table `VerificationToken` (`identifier` varchar(255) not null, `token` varchar(255) not null unique, `expires` DATETIME(3) not null);

create index `Account_userId_index` on `Account` (`userId`);
