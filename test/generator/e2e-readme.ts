/**
 * The shell commands of a generated README, as a reader pastes them: each ```sh block, continuation lines
 * joined. Commands that serve (and never end) and Docker commands are told apart from the rest.
 */

export type CommandKind = 'server' | 'docker' | 'run'

export interface ReadmeCommand {
  line: string
  kind: CommandKind
}

export function readmeBlocks(markdown: string): ReadmeCommand[][] {
  const blocks: ReadmeCommand[][] = []
  for (const [, body] of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = body!
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'))
    blocks.push(lines.map((line) => ({ line, kind: kindOf(line) })))
  }
  return blocks
}

function kindOf(line: string): CommandKind {
  if (/^(npm|pnpm|yarn|bun) (run )?(dev|start)\b/.test(line)) return 'server'
  if (/^docker\s/.test(line) || /&&\s*docker\s/.test(line)) return 'docker'
  return 'run'
}

/** Variables a command line reads (`$X`, `${X}`). */
export const variablesRead = (line: string): string[] =>
  [...line.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1]!)

/** Variables a command line assigns (`X=…` at its start). */
export const variablesSet = (line: string): string[] =>
  [...line.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/g)].map((match) => match[1]!)

/**
 * What is wrong with a Docker command line, checked without an engine: `docker build` needs the Dockerfile,
 * `--env-file` a file that exists, and `docker run` the image the build tagged.
 */
export function dockerProblems(line: string, exists: (path: string) => boolean): string[] {
  const problems: string[] = []
  const words = line.split(/\s+/)
  const tag = /docker build\b.*?-t\s+(\S+)/.exec(line)?.[1]
  if (/docker build\b/.test(line) && !exists('Dockerfile')) problems.push('docker build without a Dockerfile')
  for (const [i, word] of words.entries()) {
    const file =
      word === '--env-file'
        ? words[i + 1]
        : word.startsWith('--env-file=')
          ? word.slice('--env-file='.length)
          : undefined
    if (file !== undefined && !exists(file)) problems.push(`--env-file ${file}: the project has no such file`)
  }
  if (/docker run\b/.test(line) && tag && words.at(-1) !== tag)
    problems.push(`docker run ${words.at(-1)} is not the image built (${tag})`)
  return problems
}
