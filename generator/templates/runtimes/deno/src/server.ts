// The agent served on Deno: `deno task start` runs this file, `deno task dev` runs it with --watch. serveAgent picks
// Deno's own server (Deno.serve), listens on PORT and HOST (3000 and 127.0.0.1 unless set) and shuts down gracefully
// on SIGTERM.
// First, so that .env is in the environment before any other module runs.
import './load-env.ts'
import { serveAgent } from 'a2a-runtime'
import agent from './agent.ts'

await serveAgent(agent)
