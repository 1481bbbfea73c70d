import { isAbsolute, resolve } from 'node:path'
import { ConfigurationError } from '../errors.js'
import type { Logger } from '../_logger.js'
import type { TaskStore } from './_store.js'
import { createFileStore } from './file.js'
import { createMemoryStore } from './memory.js'

export const STORE_SETTING_FORMS = '"memory" or "file:<directory>"'

/**
 * The store one setting names (`A2A_STORE`): `memory` (the default), or `file:<directory>` for the durable
 * embedded store (a relative directory is taken from `cwd`).
 */
export function storeFromSetting(setting: string, options: { cwd?: string; logger?: Pick<Logger, 'warn'> } = {}): TaskStore {
  const value = setting.trim()
  if (value === '' || value === 'memory') return createMemoryStore()
  if (value.startsWith('file:')) {
    const dir = value.slice('file:'.length)
    if (!dir) throw new ConfigurationError(`A2A_STORE: "file:" needs a directory, e.g. file:./.a2a`)
    return createFileStore({ dir: isAbsolute(dir) ? dir : resolve(options.cwd ?? process.cwd(), dir), ...(options.logger && { logger: options.logger }) })
  }
  throw new ConfigurationError(`A2A_STORE must be ${STORE_SETTING_FORMS} (got ${JSON.stringify(value.slice(0, 80))})`)
}
