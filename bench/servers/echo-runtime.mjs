// The echo agent of the A/B comparison (bench/ab.mjs), of bench/auth.mjs and of the runtime rows (bench/_runtimes.mjs)
// on the runtime build named by A2A_RUNTIME_ENTRY (a runtime/dist/index.js), served on 127.0.0.1:PORT with
// serveAgent and a silent logger, so two builds of the runtime, or one build on several JavaScript runtimes, run the
// same agent code.
import { echoDefinition, silentLogger } from './_echo-agent.mjs'

const { defineAgent, serveAgent, createMemoryStore } = await import(process.env.A2A_RUNTIME_ENTRY)

// BENCH_MAX_TASKS: a smaller retention than the store's default (bench/instructions.mjs keeps the heap small, so
// that full collections, whose cost depends on where they fall, do not swamp the request path).
const maxTasks = process.env.BENCH_MAX_TASKS ? Number(process.env.BENCH_MAX_TASKS) : undefined
const store = maxTasks ? { store: createMemoryStore({ maxTasks }) } : {}
// BENCH_AUTH_SCHEME (bench/auth.mjs): the card declares that one scheme, whose credentials the runtime reads from
// its own variables (A2A_API_KEY; A2A_OIDC_ISSUER and A2A_OIDC_AUDIENCE), so every request must prove a caller.
const scheme = process.env.BENCH_AUTH_SCHEME
const card = scheme ? { ...echoDefinition.card, authentication: { schemes: [scheme] } } : echoDefinition.card
await serveAgent(defineAgent({ ...echoDefinition, card }), {
  hostname: '127.0.0.1',
  port: Number(process.env.PORT),
  logger: silentLogger,
  ...store,
})
