import type { TestProject } from 'vitest/node'
import { type PostgresServer, postgresAvailable, startPostgres } from './runtime/_postgres.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** One PostgreSQL cluster for the whole run (tests keep apart by schema); empty when none is installed. */
    postgresUrl: string
  }
}

let server: PostgresServer | undefined

/** Starts the run's PostgreSQL cluster (vitest globalSetup); stopped and removed when the run ends. */
export async function setup(project: TestProject): Promise<void> {
  server = postgresAvailable() ? await startPostgres() : undefined
  project.provide('postgresUrl', server?.url ?? '')
}

export async function teardown(): Promise<void> {
  await server?.stop()
}
