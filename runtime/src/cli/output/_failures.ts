import { A2AClientFailure, type A2AClientFailureKind, A2AProtocolError } from '../../client/errors.js'
import type { AgentCard, JsonObject } from '../../client/types.js'
import { ConfigurationError } from '../../errors.js'
import { ProjectError } from '../_errors.js'
import { shellWord } from './_sanitize.js'

/**
 * A failure as the error envelope every output mode reports, and the exit status that goes with its code.
 * Protocol failures keep A2A's error name (`A2AProtocolError`); failures that never got an A2A answer carry an
 * `A2ACLI_ERR_*` code; `InvalidAgentResponseError` is A2A's own name for an agent answering outside the protocol.
 */
export interface ErrorEnvelope {
  error: {
    code: string
    message: string
    /** The next step, when there is a useful one. */
    hint: string | null
    /** The binding's own code (a JSON-RPC number, a REST reason), when the agent answered one. */
    a2aCode: string | number | null
  }
}

/** Wrong arguments, flags or configured values (the flags' equivalents): exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError'
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message)
  }
}

/**
 * A failure that is neither the agent's nor the client core's, whose code and next step the command knows (`a2a
 * auth`: the authorization server's refusal, its token file): reported as it says, with its code's exit status.
 */
export class CommandFailure extends Error {
  override name = 'CommandFailure'
  constructor(
    readonly code: `A2ACLI_ERR_${string}`,
    message: string,
    readonly hint?: string,
  ) {
    super(message)
  }
}

/**
 * Where a credential the command sent came from: the caller's flag, variable or `.env` setting (`given`), the token
 * `a2a auth login` stored (`stored`), or the project's own A2A_BEARER_TOKEN / A2A_API_KEY for its local agent.
 */
export type CredentialOrigin = 'given' | 'stored' | 'project'

/**
 * The agent's card says it cannot do what was asked (no push notifications, no extended card), so a2a did not ask:
 * reported under A2A's name for that refusal, with no binding code since no agent answered it.
 */
export class NotDeclaredError extends Error {
  constructor(
    readonly errorName: 'PushNotificationNotSupportedError' | 'UnsupportedOperationError',
    message: string,
  ) {
    super(message)
  }
}

/** What the command knew when it failed, for a hint that names the next step. */
export interface FailureContext {
  /** The card of the agent addressed, once resolved: its security schemes name the credential wanted. */
  card?: AgentCard
  /** The `--agent-card` given, if any. */
  agentRef?: string
  /** The task the command addressed (`--task-id`, `task get <id>`…). */
  taskId?: string
  /** The command sent a message to `taskId` (`send --task-id`): a refusal there never starts a new task. */
  continuing?: boolean
  /** Where the credentials sent came from, when any was. */
  credentialOrigins?: readonly CredentialOrigin[]
}

const CLIENT_CODES: Record<A2AClientFailureKind, string> = {
  'card-not-found': 'A2ACLI_ERR_CARD_NOT_FOUND',
  'card-invalid': 'A2ACLI_ERR_CARD_INVALID',
  unreachable: 'A2ACLI_ERR_UNREACHABLE',
  'credentials-missing': 'A2ACLI_ERR_CREDENTIALS_MISSING',
  'auth-failed': 'A2ACLI_ERR_AUTH_FAILED',
  timeout: 'A2ACLI_ERR_TIMEOUT',
  'bad-response': 'InvalidAgentResponseError',
}

/** The exit status of an error code: usage 2, unreachable 3, credentials 4, timeout 5, anything else 1. */
export function exitStatusOf(code: string): number {
  switch (code) {
    case 'A2ACLI_ERR_USAGE':
      return 2
    case 'A2ACLI_ERR_CARD_NOT_FOUND':
    case 'A2ACLI_ERR_UNREACHABLE':
      return 3
    case 'A2ACLI_ERR_CREDENTIALS_MISSING':
    case 'A2ACLI_ERR_AUTH_FAILED':
      return 4
    case 'A2ACLI_ERR_TIMEOUT':
      return 5
    default:
      return 1
  }
}

/** Any thrown value as the envelope: never a stack, an unknown failure as `A2ACLI_ERR_INTERNAL` with its message. */
export function toEnvelope(failure: unknown, context: FailureContext = {}): ErrorEnvelope {
  if (failure instanceof A2AProtocolError)
    return envelope(failure.name, failure.message, protocolHint(failure.name, context), failure.a2aCode)
  if (failure instanceof NotDeclaredError)
    return envelope(failure.errorName, failure.message, protocolHint(failure.errorName, context), null)
  if (failure instanceof A2AClientFailure)
    return envelope(CLIENT_CODES[failure.kind], failure.message, clientHint(failure.kind, context), null)
  if (failure instanceof CommandFailure) return envelope(failure.code, failure.message, failure.hint ?? null, null)
  if (failure instanceof UsageError)
    return envelope('A2ACLI_ERR_USAGE', failure.message, failure.hint ?? 'a2a <command> --help lists its options', null)
  // The project's own problems (a2a dev, a2a start) already read as one line the user can act on.
  if (failure instanceof ProjectError || failure instanceof ConfigurationError)
    return envelope('A2ACLI_ERR_INTERNAL', failure.message, null, null)
  const message = failure instanceof Error ? failure.message : String(failure)
  return envelope('A2ACLI_ERR_INTERNAL', message || 'unexpected failure', null, null)
}

function envelope(code: string, message: string, hint: string | null, a2aCode: string | number | null): ErrorEnvelope {
  return { error: { code, message, hint, a2aCode } }
}

function protocolHint(name: string, context: FailureContext): string | null {
  const task = context.taskId === undefined ? '<id>' : shellWord(context.taskId)
  if (context.continuing && context.taskId !== undefined)
    return `the agent refused task ${context.taskId} and no new task was started; --debug shows its answer`
  switch (name) {
    case 'TaskNotFoundError':
      return `a2a task list${agentOption(context)} shows the tasks the agent keeps for you`
    case 'TaskNotCancelableError':
      return `the task has already ended: a2a task get${agentOption(context)} ${task} shows its state`
    case 'PushNotificationNotSupportedError':
      return "the agent's card does not declare capabilities.pushNotifications"
    case 'ContentTypeNotSupportedError':
      return "set each part's type with --media-type, to one the card's defaultInputModes lists"
    case 'VersionNotSupportedError':
      return `the agent does not speak this A2A version: a2a card get${agentOption(context)} lists its interfaces`
    default:
      return null
  }
}

function clientHint(kind: A2AClientFailureKind, context: FailureContext): string | null {
  switch (kind) {
    case 'card-not-found':
      return 'give --agent-card a host (its /.well-known/agent-card.json is read), a card URL or a card file'
    case 'card-invalid':
      return `a2a card get --validate${agentOption(context)} names what is wrong with it`
    case 'unreachable':
      return context.agentRef === undefined
        ? "is this project's agent running? start it with `npm run dev`, or name another with --agent-card"
        : 'is the agent running, and is the address right?'
    case 'credentials-missing':
      return credentialHint(context)
    case 'auth-failed':
      return refusalHint(context)
    case 'timeout':
      return context.taskId === undefined
        ? 'raise --timeout'
        : `raise --timeout, or wait again with a2a task get${agentOption(context)} --wait ${shellWord(context.taskId)}`
    case 'bad-response':
      return 'the agent answered outside A2A v1.0: --debug shows the exchange'
  }
}

/** What to do about a refused credential, by where it came from. */
function refusalHint(context: FailureContext): string {
  const origins = context.credentialOrigins ?? []
  if (origins.length > 0 && !origins.includes('given')) {
    if (origins.includes('stored'))
      return `the agent refused the token a2a auth login stored: sign in again with a2a auth login${agentOption(context)}`
    return "the agent refused this project's own credential (A2A_BEARER_TOKEN or A2A_API_KEY in its .env): check it"
  }
  return 'the agent refused the credential sent: check --bearer or --api-key (A2ACLI_BEARER, A2ACLI_API_KEY)'
}

/** The flag (and its variable) for the credential the card's security schemes ask for. */
function credentialHint(context: FailureContext): string {
  const hints: string[] = []
  for (const scheme of Object.values(context.card?.securitySchemes ?? {})) {
    const [kind, body] = Object.entries(scheme)[0] ?? []
    const details = (body ?? {}) as JsonObject
    if (kind === 'apiKeySecurityScheme') hints.push('pass --api-key <key> (or set A2ACLI_API_KEY)')
    else if (kind === 'httpAuthSecurityScheme' && String(details.scheme ?? '').toLowerCase() === 'bearer')
      hints.push('pass --bearer <token> (or set A2ACLI_BEARER)')
    else if (kind === 'oauth2SecurityScheme')
      hints.push(`sign in with a2a auth login${agentOption(context)}, or pass --bearer <token>`)
    else if (kind === 'openIdConnectSecurityScheme') hints.push('pass an OpenID Connect token with --bearer <token>')
  }
  const unique = [...new Set(hints)]
  if (unique.length === 0) return 'pass --bearer <token> or --api-key <key> (or set A2ACLI_BEARER or A2ACLI_API_KEY)'
  return `the agent's card asks for a credential: ${unique.join('; or ')}`
}

const agentOption = (context: FailureContext) =>
  context.agentRef === undefined ? '' : ` --agent-card ${shellWord(context.agentRef)}`
