// Runs Auth.js's own setEnvDefaults (@auth/core, installed by npm ci in
// the jwt module's interop folder, whose location jwttest.RunNode passes) for the handler's environment test (env_test.go).
//
// stdin:  {"env": {"AUTH_SECRET": "...", ...}, "providers": ["github", ...]}
//         each provider given as Auth.js's function form (providers: [GitHub]).
// stdout: {"secret": [...], "basePath": "...", "redirectProxyUrl": "...",
//          "providers": [{"id", "clientId", "clientSecret", "issuer"}]}
const core = new URL(process.env.AUTHPORT_AUTHJS_CORE) // jwttest.AuthCore: the jwt module's npm ci
const { setEnvDefaults } = await import(new URL("index.js", core))

const input = JSON.parse(await new Promise((resolve) => {
  let data = ""
  process.stdin.on("data", (c) => (data += c))
  process.stdin.on("end", () => resolve(data))
}))

const providers = []
for (const id of input.providers) {
  const { default: factory } = await import(new URL(`providers/${id}.js`, core))
  providers.push(factory)
}
const config = { providers }
setEnvDefaults(input.env, config, true)
process.stdout.write(JSON.stringify({
  secret: config.secret,
  basePath: config.basePath,
  redirectProxyUrl: config.redirectProxyUrl ?? "",
  providers: config.providers.map((p) => ({
    id: p.id, clientId: p.clientId ?? "", clientSecret: p.clientSecret ?? "", issuer: p.issuer ?? "",
  })),
}))
