// The agent served on Bun: `npm start` runs this file, `npm run dev` runs it with --watch. serveAgent picks Bun's own
// server (Bun.serve), listens on PORT and HOST (3000 and 127.0.0.1 unless set) and shuts down gracefully on SIGTERM;
// Bun has read .env into the environment before this runs.
import { serveAgent } from 'a2a-runtime'
import agent from './agent.ts'

await serveAgent(agent)
