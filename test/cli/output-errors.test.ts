import { describe, expect, it } from 'vitest'
import { type FailureContext, UsageError } from '../../runtime/src/cli/output/_failures.ts'
import { createOutput } from '../../runtime/src/cli/output/_output.ts'
import { A2AClientFailure, type A2AClientFailureKind, A2AProtocolError } from '../../runtime/src/client/errors.ts'
import type { AgentCard } from '../../runtime/src/client/types.ts'

/** Failures as the error envelope, their exit statuses, and hints that name the next step. */

function fail(failure: unknown, format: 'text' | 'json' = 'json', extra: FailureContext = {}) {
  const out: string[] = []
  const err: string[] = []
  const output = createOutput({
    format,
    agentRef: extra.agentRef,
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
  })
  const status = output.error(failure, extra)
  return { status, stdout: out.join(''), stderr: err.join('') }
}

const card = (schemes: AgentCard['securitySchemes']): AgentCard => ({
  name: 'A',
  description: '',
  version: '1',
  supportedInterfaces: [],
  capabilities: {},
  securitySchemes: schemes,
  defaultInputModes: [],
  defaultOutputModes: [],
  skills: [],
})

describe('error envelope', () => {
  it('keeps the A2A error name and the binding code of a protocol failure', () => {
    const { status, stdout } = fail(new A2AProtocolError('TaskNotFoundError', 'no task x', -32001))
    expect(status).toBe(1)
    expect(JSON.parse(stdout).error).toMatchObject({ code: 'TaskNotFoundError', message: 'no task x', a2aCode: -32001 })
  })

  it.each<[A2AClientFailureKind, string, number]>([
    ['card-not-found', 'A2ACLI_ERR_CARD_NOT_FOUND', 3],
    ['card-invalid', 'A2ACLI_ERR_CARD_INVALID', 1],
    ['unreachable', 'A2ACLI_ERR_UNREACHABLE', 3],
    ['credentials-missing', 'A2ACLI_ERR_CREDENTIALS_MISSING', 4],
    ['auth-failed', 'A2ACLI_ERR_AUTH_FAILED', 4],
    ['timeout', 'A2ACLI_ERR_TIMEOUT', 5],
    ['bad-response', 'InvalidAgentResponseError', 1],
  ])('maps a client failure %s to %s, exit %i, with a hint', (kind, code, exit) => {
    const { status, stdout } = fail(new A2AClientFailure(kind, `failed: ${kind}`))
    expect(status).toBe(exit)
    const { error } = JSON.parse(stdout)
    expect(error).toMatchObject({ code, message: `failed: ${kind}`, a2aCode: null })
    expect(typeof error.hint).toBe('string')
  })

  it('usage errors exit 2; anything else is A2ACLI_ERR_INTERNAL with its message and never a stack', () => {
    expect(fail(new UsageError('--media-type needs a part before it')).status).toBe(2)
    const internal = fail(new TypeError('x is not a function'))
    expect(internal.status).toBe(1)
    expect(JSON.parse(internal.stdout).error).toEqual({
      code: 'A2ACLI_ERR_INTERNAL',
      message: 'x is not a function',
      hint: null,
      a2aCode: null,
    })
    expect(internal.stdout).not.toMatch(/\n\s+at /)
    expect(JSON.parse(fail('a string').stdout).error.message).toBe('a string')
  })

  it('in text, prints Error, Code, A2A code and Hint lines on stderr and nothing on stdout', () => {
    const { status, stdout, stderr } = fail(new A2AProtocolError('TaskNotCancelableError', 'done', -32002), 'text', {
      taskId: 'task 9',
      agentRef: 'localhost:3000',
    })
    expect(status).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toBe(
      [
        'Error: done',
        'Code: TaskNotCancelableError',
        'A2A code: -32002',
        "Hint: the task has already ended: a2a task get --agent-card localhost:3000 'task 9' shows its state",
        '',
      ].join('\n'),
    )
  })

  it('names the flag and variable of the credential the card asks for', () => {
    const missing = new A2AClientFailure('credentials-missing', 'HTTP 401 from http://x/')
    const apiKey = card({ key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } } })
    expect(JSON.parse(fail(missing, 'json', { card: apiKey }).stdout).error.hint).toBe(
      "the agent's card asks for a credential: pass --api-key <key> (or set A2ACLI_API_KEY)",
    )
    const bearer = card({ jwt: { httpAuthSecurityScheme: { scheme: 'bearer' } } })
    expect(JSON.parse(fail(missing, 'json', { card: bearer }).stdout).error.hint).toContain(
      'pass --bearer <token> (or set A2ACLI_BEARER)',
    )
    const oauth = card({ o: { oauth2SecurityScheme: { flows: {} } } })
    expect(JSON.parse(fail(missing, 'json', { card: oauth, agentRef: 'a.example' }).stdout).error.hint).toContain(
      'a2a auth login --agent-card a.example',
    )
  })

  it('points a refused --task-id at --debug, and says no new task was started', () => {
    const refused = new A2AProtocolError('TaskNotFoundError', 'Task not found', -32001)
    const { stdout } = fail(refused, 'json', { taskId: 'gone', continuing: true })
    expect(JSON.parse(stdout).error.hint).toBe(
      'the agent refused task gone and no new task was started; --debug shows its answer',
    )
  })

  it('asks whether the agent runs, naming this project when no --agent-card was given', () => {
    const down = new A2AClientFailure('unreachable', 'connect ECONNREFUSED 127.0.0.1:3000')
    expect(JSON.parse(fail(down).stdout).error.hint).toMatch(/npm run dev/)
    expect(JSON.parse(fail(down, 'json', { agentRef: 'x.example' }).stdout).error.hint).toBe(
      'is the agent running, and is the address right?',
    )
  })
})
