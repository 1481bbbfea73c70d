import type { createEnvReloader } from '../cli/_env.js'
import type { Logger } from '../logger.js'
import { watchProject } from './_watch.js'

/** Saves arriving this close together are one change (editors write a file in several steps). */
const SETTLE_MS = 15

/**
 * Watches the project and reloads on every save, one reload at a time (saves during a reload bring one more
 * afterwards); a changed `.env` is read again first, and `envChanged` hears the names whose value changed. The
 * function returned stops watching.
 */
export function reloadOnSave(
  cwd: string,
  env: ReturnType<typeof createEnvReloader>,
  load: (files: string[]) => Promise<void>,
  logger: Logger,
  envChanged: (names: string[]) => void = () => {},
): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined
  let changed = new Set<string>()
  let reloading: Promise<void> | undefined
  const reload = async () => {
    const files = [...changed]
    changed = new Set()
    try {
      if (files.some((file) => file === '.env')) {
        const names = env.reload()
        if (names.length) {
          logger.info(`.env: ${names.join(', ')} changed`)
          envChanged(names)
        }
      }
    } catch (error) {
      logger.error(`.env could not be read: ${(error as Error).message}`)
    }
    logger.info(`${files.join(', ')} changed: reloading`)
    await load(files)
  }
  const watcher = watchProject(cwd, (file) => {
    changed.add(file)
    clearTimeout(timer)
    timer = setTimeout(() => {
      reloading = (reloading ?? Promise.resolve())
        .then(reload)
        .catch((error) => logger.error('The reload failed', error))
    }, SETTLE_MS)
  })
  return () => {
    watcher.close()
    clearTimeout(timer)
  }
}
