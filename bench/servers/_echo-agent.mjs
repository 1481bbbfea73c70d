// The echo agent the runtime rows measure, shared by the process that serves it with serveAgent (echo-runtime.mjs,
// on Node, Bun and Deno) and the Worker that serves it on workerd (worker-agent.mjs), so every runtime runs the
// same agent code. A definition for defineAgent, not an agent: echo-runtime.mjs takes the runtime build to load
// from its environment, and the Worker's bundle has to import it statically.
export const echoDefinition = {
  card: { name: 'Echo', description: 'Echoes the message', version: '1.0.0', capabilities: { streaming: true } },
  async execute(ctx, task) {
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  },
}

/** No log line per request: writing them would be part of what is measured. */
export const silentLogger = { debug() {}, info() {}, warn() {}, error() {} }
