import { spawn } from 'node:child_process'
import type { Logger } from '../logger.js'

/** The command each platform opens a URL with in the user's default browser. */
function opener(url: string): [string, string[]] {
  if (process.platform === 'darwin') return ['open', [url]]
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '""', url]]
  return ['xdg-open', [url]]
}

/** Opens `url` in the default browser, detached; says so (and where to go) when there is none. */
export function openInBrowser(url: string, logger: Logger): void {
  const [command, args] = opener(url)
  const fail = () => logger.warn(`Could not open a browser; open ${url} yourself`)
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true, windowsHide: true })
    child.once('error', fail)
    child.unref()
  } catch {
    fail()
  }
}
