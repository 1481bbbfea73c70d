import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// A small disk for the file store's full-disk tests: a tmpfs of a few MiB on a fresh directory, which the test
// fills (its store's writes then fail with ENOSPC) and makes room on again. Mounting needs root on Linux.

export interface SmallDisk {
  /** Where it is mounted. */
  dir: string
  /** Remounts it at `bytes` (a larger size: room again, the files kept). */
  resize(bytes: number): void
  /** Unmounts it (lazily when a process still holds a file there) and removes its directory; again: nothing. */
  unmount(): void
}

const run = (command: string, args: string[]): void => {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/** Mounts a tmpfs of `bytes` on a new temporary directory. */
export function mountSmallDisk(bytes: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-small-disk-'))
  try {
    run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', dir])
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  let mounted = true
  return {
    dir,
    resize: (size) => run('mount', ['-o', `remount,size=${size}`, dir]),
    unmount() {
      if (!mounted) return
      mounted = false
      try {
        run('umount', [dir])
      } catch {
        run('umount', ['-l', dir])
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Why no small disk can be mounted here (not Linux, not root, mount refused), or undefined when one can. */
export function smallDiskUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `it mounts a tmpfs, which needs Linux (this is ${process.platform})`
  if (process.getuid?.() !== 0) return 'it mounts a tmpfs, which needs root'
  try {
    mountSmallDisk(64 * 1024).unmount()
    return undefined
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim()
    return `mount -t tmpfs failed (${stderr || (error as Error).message})`
  }
}

/** Every file under `dir`, its subdirectories' included, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => statSync(join(dir, name)).isFile())
    .sort()
}

/**
 * Segments (`<dir>/log/*.jsonl`) that hold no whole line after their header (empty, header only, or a line cut
 * short), and those whose lines do not all parse as JSON or whose end is not a line's: what a failed write must
 * not leave behind.
 */
export function badSegments(storeDir: string): { empty: string[]; torn: string[] } {
  const empty: string[] = []
  const torn: string[] = []
  const log = join(storeDir, 'log')
  for (const name of readdirSync(log).filter((file) => file.endsWith('.jsonl'))) {
    const text = readFileSync(join(log, name), 'utf8')
    const lines = text.split('\n')
    // Its header is the first line: a whole line after it is a second newline.
    if (lines.length < 3) empty.push(name)
    if (!text.endsWith('\n') || lines.slice(0, -1).some((line) => !parses(line))) torn.push(name)
  }
  return { empty, torn }
}

function parses(line: string): boolean {
  try {
    JSON.parse(line)
    return true
  } catch {
    return false
  }
}
