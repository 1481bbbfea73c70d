import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseJson, type Run } from './cli.ts'

/** Reading what a run printed with `-o json`: the protocol's own documents. */

export type Doc = any

/** The one document a json run printed (undefined unless stdout is exactly one JSON value). */
export const docOf = (run: Run): Doc => parseJson(run.stdout.trim())

/** The task a `send -o json` answered with (its SendMessageResponse's `task`). */
export const sentTask = (run: Run): Doc => docOf(run)?.task

/** Each part's text of a task's artifacts, joined. */
export const artifactText = (task: Doc): string =>
  ((task?.artifacts ?? []) as Doc[]).flatMap((artifact) => artifact.parts.map((part: Doc) => part.text ?? '')).join('')

export const stateOf = (task: Doc): string | undefined => task?.status?.state

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}
