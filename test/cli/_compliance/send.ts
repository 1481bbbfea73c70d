import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { INLINE_BYTES, type Received } from './agents.ts'
import { described, envelopeOf, jsonLines } from './cli.ts'
import type { Check } from './context.ts'
import { artifactText, type Doc, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'
const SETTLED = new Set([COMPLETED, 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'])

/** The message the runtime agent received for `taskId` (its last turn). */
const receivedBy = (received: Received[], taskId: string | undefined) =>
  received.filter((message) => message.taskId === taskId).at(-1)

/** `send`: starting an interaction, waiting or not, streaming, artifacts and message parts. */
export const sendChecks: Check[] = [
  {
    id: 'A2ACLI_SEND_001',
    how: "send a message to this runtime's agent and to the SDK's, and get the echoed answer",
    async run({ agents, run }, observe) {
      for (const [who, url] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const sent = await run(['send', '-a', url, '-o', 'json', 'hello'])
        const task = sentTask(sent)
        observe.expect(
          sent.code === 0 && stateOf(task) === COMPLETED && artifactText(task) === 'Echo: hello',
          `the ${who} agent's completed task with its answer`,
          described(sent),
        )
      }
    },
  },
  {
    id: 'A2ACLI_SEND_002',
    how: 'send waits for a slow task; --async, --no-wait and --return-immediately print a running task at once',
    async run({ agents, run }, observe) {
      const [slow, sdk, ...early] = await Promise.all([
        run(['send', '-a', agents.runtime, '-o', 'json', 'slow']),
        run(['send', '-a', agents.sdk.url, '-o', 'json', 'hello']),
        run(['send', '-a', agents.runtime, '-o', 'json', '--async', 'wait']),
        run(['send', '-a', agents.runtime, '-o', 'json', '--no-wait', 'wait']),
        run(['send', '-a', agents.runtime, '-o', 'json', '--return-immediately', 'wait']),
        run(['send', '-a', agents.sdk.url, '-o', 'json', '--async', 'wait']),
      ])
      observe.expect(
        stateOf(sentTask(slow)) === COMPLETED && slow.ms >= 1400,
        'the default send to wait the 1.5 s the task works and print it completed',
        described(slow),
      )
      observe.expect(stateOf(sentTask(sdk)) === COMPLETED, "the SDK agent's task waited for", described(sdk))
      for (const [index, flag] of ['--async', '--no-wait', '--return-immediately', '--async (SDK)'].entries()) {
        const task = sentTask(early[index]!)
        observe.expect(
          early[index]!.code === 0 && !SETTLED.has(stateOf(task)!) && !!task?.id && !!task?.contextId,
          `${flag} to return the running task with its ids`,
          described(early[index]!),
        )
      }
      // The tasks left working are canceled, so the agents stop them now.
      await Promise.all(
        early.map((each, index) =>
          run(['task', 'cancel', '-a', index === 3 ? agents.sdk.url : agents.runtime, sentTask(each)?.id ?? 'none']),
        ),
      )
    },
  },
  {
    id: 'A2ACLI_SEND_003',
    how: '--stream on a streaming agent and on one without streaming (no hang), and on a Message-only reply',
    async run({ agents, run }, observe) {
      const [streamed, sdk, plain, reply] = await Promise.all([
        run(['send', '-a', agents.runtime, '-o', 'json', '--stream', 'hello']),
        run(['send', '-a', agents.sdk.url, '-o', 'json', '--stream', 'hello']),
        run(['send', '-a', agents.plain, '-o', 'json', '--stream', 'hello']),
        run(['send', '-a', agents.runtime, '-o', 'json', '--stream', 'reply']),
      ])
      for (const [who, each] of [
        ['runtime', streamed],
        ['SDK', sdk],
      ] as const) {
        const lines = jsonLines(each.stdout) as Doc[]
        observe.expect(
          each.code === 0 &&
            lines.length >= 3 &&
            'task' in (lines[0] ?? {}) &&
            lines.at(-1)?.statusUpdate?.status?.state === COMPLETED,
          `the ${who} agent's stream: the Task first, then events, the last one completed`,
          described(each),
        )
      }
      const plainLines = jsonLines(plain.stdout) as Doc[]
      observe.expect(
        plain.code === 0 && plainLines.length === 1 && stateOf(plainLines[0]?.task) === COMPLETED,
        'an agent without streaming to be answered without hanging, as one JSON line',
        described(plain),
      )
      const replyLines = jsonLines(reply.stdout) as Doc[]
      observe.expect(
        reply.code === 0 && replyLines.length === 1 && replyLines[0]?.message?.role === 'ROLE_AGENT',
        'a Message-only answer to end cleanly with that one message',
        described(reply),
      )
    },
  },
  {
    id: 'A2ACLI_SEND_004',
    how: 'an answer of text, data, an inline file and a file by URL, shown whole in text, in json and streamed',
    async run({ agents, run }, observe) {
      const [text, json, streamed] = await Promise.all([
        run(['send', '-a', agents.runtime, 'parts']),
        run(['send', '-a', agents.runtime, '-o', 'json', 'parts']),
        run(['send', '-a', agents.runtime, '--stream', 'parts']),
      ])
      for (const [how, each] of [
        ['text', text],
        ['text --stream', streamed],
      ] as const) {
        observe.expect(
          each.stdout.includes('Plain words of the answer'),
          `${how}: the text part as text`,
          described(each),
        )
        observe.expect(
          each.stdout.includes('"city": "Oslo"'),
          `${how}: the data part as formatted JSON`,
          described(each),
        )
        observe.expect(
          each.stdout.includes(`File: report.pdf (application/pdf, ${INLINE_BYTES.length} bytes)`),
          `${how}: the inline file by name, media type and size`,
          described(each),
        )
        observe.expect(
          /File: notes\.txt \(text\/plain, http:\/\/\S+\/notes\.txt\)/.test(each.stdout),
          `${how}: the file by URL with its address`,
          described(each),
        )
      }
      const parts = ((sentTask(json)?.artifacts ?? []) as Doc[]).flatMap((artifact) => artifact.parts as Doc[])
      observe.expect(
        parts.length === 4 &&
          parts.some((part) => part.data?.city === 'Oslo') &&
          parts.some((part) => part.raw === INLINE_BYTES.toString('base64')) &&
          parts.some((part) => /notes\.txt$/.test(part.url ?? '')),
        'json: every part of every artifact, unchanged',
        described(json),
      )
    },
  },
  {
    id: 'A2ACLI_SEND_005',
    how: "--media-type on a file, a text and over an extension's guess, as the agent received them; misplaced: usage",
    async run({ agents, run, cwd }, observe) {
      writeFileSync(join(cwd, 'report'), INLINE_BYTES)
      writeFileSync(join(cwd, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
      writeFileSync(join(cwd, 'chart.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
      const [sent, misplaced] = await Promise.all([
        run([
          'send',
          '-a',
          agents.runtime,
          '-o',
          'json',
          '--file',
          'report',
          '--media-type',
          'application/pdf',
          '--text',
          '# Title',
          '--media-type',
          'text/markdown',
          '--file',
          'photo.png',
          '--file',
          'chart.png',
          '--media-type',
          'image/webp',
        ]),
        run(['send', '-a', agents.runtime, '-o', 'json', '--media-type', 'text/plain', '--text', 'x']),
      ])
      const parts = receivedBy(agents.received, sentTask(sent)?.id)?.parts ?? []
      const types = parts.map((part) => (part.kind === 'file' ? (part.file as Doc).mimeType : part.mediaType))
      observe.expect(
        JSON.stringify(types) === JSON.stringify(['application/pdf', 'text/markdown', 'image/png', 'image/webp']),
        'the types application/pdf (given), text/markdown (given), image/png (guessed), image/webp (over the guess)',
        `the agent received ${JSON.stringify(types)} (${described(sent)})`,
      )
      observe.expect(
        misplaced.code === 2 && envelopeOf(misplaced)?.code === 'A2ACLI_ERR_USAGE',
        '--media-type before any part to be a usage error (exit 2)',
        described(misplaced),
      )
    },
  },
  {
    id: 'A2ACLI_SEND_006',
    how: '--text, --data (a file and stdin) and --file repeated and interleaved reach the agent in that order',
    async run({ agents, run, cwd }, observe) {
      writeFileSync(join(cwd, 'first.json'), '{"first":1}')
      writeFileSync(join(cwd, 'notes.txt'), 'notes')
      const sent = await run(
        [
          'send',
          '-a',
          agents.runtime,
          '-o',
          'json',
          '--text',
          'one',
          '--data',
          'first.json',
          '--text',
          'two',
          '--file',
          'notes.txt',
          '--data',
          '-',
        ],
        { stdin: '{"second":2}' },
      )
      const parts = receivedBy(agents.received, sentTask(sent)?.id)?.parts ?? []
      const shape = parts.map((part) =>
        part.kind === 'text'
          ? `text:${part.text}`
          : part.kind === 'data'
            ? `data:${JSON.stringify(part.data)}`
            : `file:${(part.file as Doc).name}`,
      )
      const expected = ['text:one', 'data:{"first":1}', 'text:two', 'file:notes.txt', 'data:{"second":2}']
      observe.expect(
        JSON.stringify(shape) === JSON.stringify(expected),
        `the parts ${expected.join(', ')}`,
        `the agent received ${JSON.stringify(shape)} (${described(sent)})`,
      )
    },
  },
]
