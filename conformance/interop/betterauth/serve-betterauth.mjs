// The Node side of the Better Auth interop suite (conformance/interop/betterauth):
// the commands every pairing answers, through Better Auth's public API
// (auth.api) and its internal adapter (the one its endpoints use), on the
// betterAuth() instance the pairing's script builds. It ships inside the Go
// package: Start writes it out and gives the script its file: URL in
// AUTHPORT_SERVE_BETTERAUTH, so a script in any module imports it by that
// name:
//
//   const { serveBetterAuth } = await import(process.env.AUTHPORT_SERVE_BETTERAUTH)
//   serveBetterAuth(async (config, options) => {
//     const auth = betterAuth({ ...options, database: <the pairing's store> })
//     // create the tables as the app would (getMigrations), then:
//     return { auth, close, info }
//   })
//
// options are the suite's betterAuth() options without the database (the
// secret, baseURL, emailAndPassword); config is the pairing's "$open"
// config, whose "options" the suite sets. The JSON-lines loop is
// conformance/nodeproc's serve-adapter.mjs (AUTHPORT_SERVE_ADAPTER): calls
// run concurrently, dates travel as {"$date": ...}.
const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER)

// commands returns the suite's commands on auth. Each takes JSON arguments
// and answers Better Auth's own records (null when there is none).
function commands(auth) {
  const ctx = auth.$context
  const ia = async () => (await ctx).internalAdapter
  const headers = (cookie) => {
    const h = new Headers({ origin: auth.options.baseURL })
    if (cookie) h.set("cookie", cookie)
    return h
  }
  // api runs an endpoint call, turning an APIError into an error whose
  // code is its status text ("UNAUTHORIZED"), so that the Go side can
  // tell a refusal apart.
  const api = async (fn) => {
    try {
      return await fn()
    } catch (err) {
      if (err?.statusCode) {
        const e = new Error(`${err.status}: ${err.body?.message ?? err.message}`)
        e.code = String(err.status)
        throw e
      }
      throw err
    }
  }
  return {
    // signUp: POST /sign-up/email; answers {token, user}.
    signUp: (body) => api(() => auth.api.signUpEmail({ body, headers: headers() })),
    // signIn: POST /sign-in/email; answers {token, user}.
    signIn: (body) => api(() => auth.api.signInEmail({ body, headers: headers() })),
    // getSession: GET /get-session with the cookie header given (the Go
    // side signs the session token as Better Auth does); answers
    // {session, user} or null, and the Set-Cookie headers it sent.
    getSession: async (cookie, query) => {
      const res = await api(() => auth.api.getSession({ headers: headers(cookie), query: query ?? {}, returnHeaders: true }))
      return { body: res.response ?? null, setCookies: res.headers?.getSetCookie?.() ?? [] }
    },
    // signOut: POST /sign-out with the cookie; answers what it answered.
    signOut: (cookie) => api(() => auth.api.signOut({ headers: headers(cookie) })),
    findSession: async (token) => (await ia()).findSession(token),
    listSessions: async (userId) => (await ia()).listSessions(userId),
    createSession: async (userId) => (await ia()).createSession(userId),
    updateSession: async (token, data) => (await ia()).updateSession(token, data),
    deleteSession: async (token) => (await ia()).deleteSession(token),
    deleteUserSessions: async (userId) => (await ia()).deleteUserSessions(userId),
    findUserById: async (id) => (await ia()).findUserById(id),
    findUserByEmail: async (email) => (await ia()).findUserByEmail(email, { includeAccounts: true }),
    updateUser: async (id, data) => (await ia()).updateUser(id, data),
    deleteUser: async (id) => (await ia()).deleteUser(id),
    linkAccount: async (account) => (await ia()).linkAccount(account),
    findAccounts: async (userId) => (await ia()).findAccounts(userId),
    findAccountOwnerByKey: async (key) => (await ia()).findAccountOwnerByKey(key),
    deleteAccount: async (id) => (await ia()).deleteAccount(id),
    createVerificationValue: async (data) => (await ia()).createVerificationValue(data),
    findVerificationValue: async (identifier) => (await ia()).findVerificationValue(identifier),
    consumeVerificationValue: async (identifier) => (await ia()).consumeVerificationValue(identifier),
    deleteVerificationByIdentifier: async (identifier) => (await ia()).deleteVerificationByIdentifier(identifier),
    // hashPassword / verifyPassword: Better Auth's own password hashing
    // (its ctx.password, scrypt by default).
    hashPassword: async (password) => (await ctx).password.hash(password),
    verifyPassword: async (hash, password) => (await ctx).password.verify({ hash, password }),
  }
}

// serveBetterAuth serves the suite's commands on the betterAuth() that
// open(config, options) builds. open returns {auth, close, info}; info is
// the answer to "$open" (such as the SQL the migration ran).
export function serveBetterAuth(open) {
  serve(async (config = {}) => {
    const options = {
      secret: config.secret,
      baseURL: config.baseURL ?? "http://localhost:3000",
      emailAndPassword: { enabled: true },
      telemetry: { enabled: false },
      logger: { disabled: true },
      ...(config.options ?? {}),
    }
    const { auth, close, info } = await open(config, options)
    return { adapter: commands(auth), close, info }
  })
}
