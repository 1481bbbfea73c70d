import type { BindingRun } from './_binding-run.js'
import { A2A_ERRORS, isA2AReason } from './_errors-table.js'
import { actualOf, inBinding, isError } from './_expect.js'
import type { RequirementId } from './_requirements.js'
import { fail, type Verdict } from './_results.js'

/**
 * The binding's own forms, judged over every answer the interface gave during the run: the JSON-RPC envelope and
 * its standard errors, content types, error objects (JSON-RPC error, google.rpc.Status) and the ErrorInfo of A2A
 * errors (A2A v1.0 §9, §10, §11).
 */
export async function formChecks(run: BindingRun): Promise<void> {
  const { results, transport, seen } = run
  const first = <T>(items: T[], problem: (item: T) => string | undefined): string | undefined => {
    for (const item of items) {
      const found = problem(item)
      if (found) return found
    }
    return undefined
  }
  const errors = seen.answers.flatMap(({ operation, answer }) =>
    answer.error ? [{ operation, error: answer.error }] : [],
  )
  const errorInfo = (info: RequirementId) =>
    results.check(info, transport, (): Verdict => {
      const problem = first(seen.a2aErrors, ({ operation, expected, error }) =>
        !error.reason
          ? `${operation} answered ${error.summary} without an ErrorInfo (expected reason ${A2A_ERRORS[expected].reason})`
          : !error.a2aDomain
            ? `${operation}'s ErrorInfo is not of the domain a2a-protocol.org`
            : !isA2AReason(error.reason)
              ? `${operation}'s ErrorInfo reason ${error.reason} is none of A2A's`
              : undefined,
      )
      return problem ? fail('an ErrorInfo (reason, domain a2a-protocol.org) in every A2A error', problem) : undefined
    })
  if (transport === 'jsonrpc') {
    await results.check(
      'JSONRPC-FMT-001',
      transport,
      () => {
        const problem = first(seen.answers, ({ operation, answer }) =>
          answer.envelopeProblems.length > 0 ? `${operation}: ${answer.envelopeProblems.join('; ')}` : undefined,
        )
        return problem ? fail('JSON-RPC 2.0 responses echoing the request id', problem) : undefined
      },
      'answers are JSON-RPC 2.0 responses echoing the request id',
    )
    for (const [name, body, what] of [
      [
        'MethodNotFoundError',
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'NoSuchMethod', params: {} }),
        'an unknown method answers -32601',
      ],
      ['ParseError', '{"jsonrpc": "2.0", "id": 1, "method": ', 'a body that is not JSON answers -32700'],
    ] as const)
      await results.check(
        'JSONRPC-FMT-001',
        transport,
        async () => {
          const answer = await run.wire.raw!(body)
          seen.answers.push({ operation: name, answer: { ...answer, envelopeProblems: [] } })
          return answer.error && isError(transport, answer.error, name)
            ? undefined
            : fail(inBinding(transport, name), actualOf(answer))
        },
        what,
      )
    await results.check('JSONRPC-FMT-002', transport, () => {
      const problem = first(seen.answers, ({ operation, answer }) =>
        answer.contentType === undefined ||
        answer.contentType.startsWith('text/event-stream') ||
        /^application\/json\b/.test(answer.contentType)
          ? undefined
          : `${operation}: ${answer.contentType || 'no content type'}`,
      )
      return problem ? fail('Content-Type application/json', problem) : undefined
    })
    await results.check('JSONRPC-ERR-001', transport, () => {
      const problem = first(errors, ({ operation, error }) =>
        error.shapeProblems.length > 0 ? `${operation}: ${error.shapeProblems.join('; ')}` : undefined,
      )
      return problem ? fail('error objects of code, message and data', problem) : undefined
    })
    await errorInfo('JSONRPC-ERR-003')
  } else if (transport === 'http_json') {
    await results.check('HTTP_JSON-SVC-001', transport, () => {
      const problem = first(seen.answers, ({ operation, answer }) =>
        answer.contentType === undefined ||
        answer.contentType.startsWith('text/event-stream') ||
        /^application\/(a2a\+)?json\b/.test(answer.contentType)
          ? undefined
          : `${operation}: ${answer.contentType || 'no content type'}`,
      )
      return problem ? fail('Content-Type application/a2a+json', problem) : undefined
    })
    await results.check('HTTP_JSON-ERR-001', transport, () => {
      const problem = first(errors, ({ operation, error }) =>
        error.shapeProblems.length > 0 ? `${operation}: ${error.shapeProblems.join('; ')}` : undefined,
      )
      return problem ? fail('google.rpc.Status error bodies', problem) : undefined
    })
    await errorInfo('HTTP_JSON-ERR-002')
  } else {
    await errorInfo('GRPC-ERR-001')
  }
}
