// Preloaded into a server under test (NODE_OPTIONS="--expose-gc --import <this file>"). On SIGUSR2 it collects
// garbage twice (the second pass picks up what the first one's finalisers released) and writes
// process.memoryUsage() as JSON to BENCH_MEMORY_FILE, via a temporary file and a rename so the bench never
// reads half a file. `seq` lets the bench tell this answer from the previous one.
import { renameSync, writeFileSync } from 'node:fs'

const file = process.env.BENCH_MEMORY_FILE
let seq = 0

if (file && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    globalThis.gc()
    globalThis.gc()
    const usage = { seq: ++seq, pid: process.pid, ...process.memoryUsage() }
    writeFileSync(`${file}.tmp`, JSON.stringify(usage))
    renameSync(`${file}.tmp`, file)
  })
}
