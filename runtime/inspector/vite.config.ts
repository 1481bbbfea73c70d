import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// The inspector page, built with the package into dist/inspector and served by `a2a dev` under /__a2a/.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/__a2a/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/inspector', import.meta.url)),
    emptyOutDir: true,
    // Served from this machine to this machine: one script and one style sheet, no preload helper.
    modulePreload: false,
    reportCompressedSize: false,
    target: 'es2022',
  },
})
