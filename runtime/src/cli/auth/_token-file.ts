import { randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { globalFilePath } from '../config/_files.js'
import { CommandFailure } from '../output/_failures.js'
import { createPrivateFile, failureCode } from './_private-file.js'

/** One token `a2a auth login` obtained, kept for the agent whose card it was obtained for. */
export interface StoredToken {
  /** The agent's card URL (as `new URL` writes it): what later calls look tokens up by. */
  cardUrl: string
  /** The authorization server: its issuer identifier, else (a card naming only endpoints) its token endpoint. */
  issuer: string
  tokenEndpoint: string
  clientId: string
  /**
   * How the client authenticated at the token endpoint. A confidential client's secret is never stored: a refresh
   * takes it from A2ACLI_CLIENT_SECRET again.
   */
  clientAuth: 'none' | 'client_secret_basic' | 'client_secret_post'
  flow: 'device' | 'client-credentials'
  accessToken: string
  tokenType: string
  refreshToken?: string
  /** Space-separated, as the server granted them (else as asked). */
  scope?: string
  /** Milliseconds since the epoch; absent when the server gave no lifetime. */
  expiresAt?: number
}

interface TokenFile {
  version: 1
  tokens: StoredToken[]
}

/** Group and others: no bit of theirs may be set on the file (it holds bearer and refresh tokens). */
const OTHERS = 0o077
const CHECKS_MODES = process.platform !== 'win32'

/** `tokens.json` in the CLI's configuration folder, beside its global `.env` (`$XDG_CONFIG_HOME/a2a-cli/`…). */
export function tokenFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(globalFilePath(env)), 'tokens.json')
}

/**
 * The stored tokens ([] when there is no file). A file others may read or write, or that belongs to someone else,
 * is refused rather than used: its tokens may have been read, or planted.
 */
export function readTokens(path: string): StoredToken[] {
  let fd: number
  try {
    // O_NOFOLLOW: a link planted in place of the file is not followed to someone else's file.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw unreadable(path, error)
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile())
      throw new CommandFailure('A2ACLI_ERR_INTERNAL', `${path} is not a file`, `remove it: rm ${path}`)
    if (CHECKS_MODES && (stat.mode & OTHERS) !== 0)
      throw new CommandFailure(
        'A2ACLI_ERR_INTERNAL',
        `${path} can be read or written by other users, so its tokens are not used`,
        `chmod 600 ${path} (and log in again if others may have read it)`,
      )
    if (CHECKS_MODES && process.getuid && stat.uid !== process.getuid())
      throw new CommandFailure('A2ACLI_ERR_INTERNAL', `${path} belongs to another user`, `remove it: rm ${path}`)
    return parse(readFileSync(fd, 'utf8'), path)
  } finally {
    closeSync(fd)
  }
}

/**
 * Replaces the stored tokens: a new file created with mode 0600 beside the old one, then renamed over it, so a
 * reader sees the old list or the new one whole, and the tokens are never readable by others, not even for a
 * moment. No tokens left: the file is removed.
 */
export function writeTokens(path: string, tokens: StoredToken[]): void {
  try {
    replaceTokens(path, tokens)
  } catch (error) {
    if (error instanceof CommandFailure) throw error
    throw new CommandFailure('A2ACLI_ERR_INTERNAL', `Cannot write ${path}: ${failureCode(error)}`)
  }
}

function replaceTokens(path: string, tokens: StoredToken[]): void {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (CHECKS_MODES && (statSync(dir).mode & 0o022) !== 0)
    throw new CommandFailure(
      'A2ACLI_ERR_INTERNAL',
      `${dir} can be written by other users, who could replace the token file`,
      `chmod 700 ${dir}`,
    )
  if (tokens.length === 0) {
    try {
      unlinkSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    return
  }
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`
  createPrivateFile(temporary, `${JSON.stringify({ version: 1, tokens } satisfies TokenFile, null, 2)}\n`)
  try {
    renameSync(temporary, path)
  } catch (error) {
    try {
      unlinkSync(temporary)
    } catch {}
    throw error
  }
}

function parse(text: string, path: string): StoredToken[] {
  let file: unknown
  try {
    file = JSON.parse(text)
  } catch {
    file = undefined
  }
  const tokens = (file as Partial<TokenFile> | undefined)?.tokens
  if (!Array.isArray(tokens) || !tokens.every(isStoredToken))
    throw new CommandFailure(
      'A2ACLI_ERR_INTERNAL',
      `${path} is not a token file of this CLI`,
      `remove it (rm ${path}) and log in again`,
    )
  return tokens
}

function isStoredToken(value: unknown): value is StoredToken {
  const token = value as Partial<StoredToken> | null
  return (
    typeof token === 'object' &&
    token !== null &&
    typeof token.cardUrl === 'string' &&
    typeof token.issuer === 'string' &&
    typeof token.tokenEndpoint === 'string' &&
    typeof token.clientId === 'string' &&
    typeof token.accessToken === 'string' &&
    (token.expiresAt === undefined || typeof token.expiresAt === 'number')
  )
}

function unreadable(path: string, error: unknown): CommandFailure {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ELOOP')
    return new CommandFailure('A2ACLI_ERR_INTERNAL', `${path} is a symbolic link`, `remove it: rm ${path}`)
  return new CommandFailure('A2ACLI_ERR_INTERNAL', `Cannot read ${path}: ${failureCode(error)}`)
}
