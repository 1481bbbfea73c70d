/**
 * The `a2a` command. `a2a start` with plain arguments (as a platform runs it, on every cold start) is served without
 * commander and the other commands' modules, which it would otherwise read first; everything else, `a2a start
 * --help` and its usage errors included, goes through the commander program (_program.ts).
 */
export async function main(argv = process.argv): Promise<void> {
  if (argv[2] === 'start') {
    const { startWithoutCommander } = await import('./_start.js')
    if (await startWithoutCommander(argv.slice(3))) return
  }
  const { runProgram } = await import('./_program.js')
  await runProgram(argv)
}
