// .env into the environment when there is one, as `deno run --env-file` does (variables already set win), but
// without its warning on every start when there is none.
import { existsSync, readFileSync } from 'node:fs'
import process from 'node:process'
import { parseEnv } from 'node:util'

if (existsSync('.env')) {
  for (const [name, value] of Object.entries(parseEnv(readFileSync('.env', 'utf8')))) process.env[name] ??= value
}
