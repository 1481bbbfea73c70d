// Empties the package's build output before a build (run from the package's directory): a module deleted from
// src must not live on in dist, where the package's tarball would ship it.
import { rmSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
