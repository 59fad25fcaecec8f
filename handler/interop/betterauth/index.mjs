// The parts of Better Auth (pinned in package.json and package-lock.json)
// that the handler's interop scripts (../../testdata/betterauth-*.mjs) use,
// imported here by name so that they resolve in this folder's node_modules.
export { betterAuth } from "better-auth";
export { memoryAdapter } from "better-auth/adapters/memory";
