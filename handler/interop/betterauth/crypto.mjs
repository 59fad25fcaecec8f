// Better Auth's password hashing (better-auth/crypto, pinned in
// package.json and package-lock.json) for ../../testdata/betterauth-password.mjs,
// imported here by name so that it resolves in this folder's node_modules
// without loading the rest of Better Auth.
export { hashPassword, verifyPassword } from "better-auth/crypto";
