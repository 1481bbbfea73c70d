// The echo agent of the A/B comparison (bench/ab.mjs) on the runtime build named by A2A_RUNTIME_ENTRY (a
// runtime/dist/index.js), served on 127.0.0.1:PORT with serveAgent and a silent logger, so two builds of the
// runtime run the same agent code.
const { defineAgent, serveAgent } = await import(process.env.A2A_RUNTIME_ENTRY)

const agent = defineAgent({
  card: { name: 'Echo', description: 'Echoes the message', version: '1.0.0', capabilities: { streaming: true } },
  async execute(ctx, task) {
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  },
})
const silent = { debug() {}, info() {}, warn() {}, error() {} }
await serveAgent(agent, { hostname: '127.0.0.1', port: Number(process.env.PORT), logger: silent })
