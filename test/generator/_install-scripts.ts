import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Installed packages that would run code at install time (preinstall, install, postinstall). */
export function installScripts(nodeModules: string): string[] {
  const found: string[] = []
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === '.bin') continue
      const path = join(dir, entry.name)
      if (entry.name.startsWith('@')) {
        visit(path)
        continue
      }
      const manifest = join(path, 'package.json')
      if (existsSync(manifest)) {
        const { name, scripts = {} } = JSON.parse(readFileSync(manifest, 'utf8'))
        if (scripts.preinstall || scripts.install || scripts.postinstall) found.push(name)
      }
      if (existsSync(join(path, 'node_modules'))) visit(join(path, 'node_modules'))
    }
  }
  visit(nodeModules)
  return found
}
