import type { TestProject } from 'vitest/node'
import { type RedisServer, redisAvailable, startRedis } from './runtime/_redis.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** One redis-server for the whole run (tests keep apart by key prefix); empty when none is installed. */
    redisUrl: string
  }
}

let server: RedisServer | undefined

/** Starts the run's redis-server (vitest globalSetup); stopped when the run ends. */
export async function setup(project: TestProject): Promise<void> {
  server = redisAvailable() ? await startRedis() : undefined
  project.provide('redisUrl', server?.url ?? '')
}

export async function teardown(): Promise<void> {
  await server?.stop()
}
