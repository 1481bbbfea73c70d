import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { described, envelopeOf, field } from './cli.ts'
import type { Check } from './context.ts'
import { completedTask } from './raw-agent.ts'
import { docOf, sentTask, stateOf } from './read.ts'

/** `card get`: reading a card by each kind of reference, and `--validate`. */
export const cardChecks: Check[] = [
  {
    id: 'A2ACLI_CARD_GET_001',
    how: 'card get by host, card URL, file:// URL and path (runtime and SDK agents); send through a card file',
    async run({ agents, run, cwd }, observe) {
      const host = new URL(agents.runtime).host
      const cardUrl = new URL('.well-known/agent-card.json', agents.runtime).href
      const [byHost, byUrl, sdk, text] = await Promise.all([
        run(['card', 'get', '-a', host, '-o', 'json']),
        run(['card', 'get', '-a', cardUrl, '-o', 'json']),
        run(['card', 'get', '-a', agents.sdk.url, '-o', 'json']),
        run(['card', 'get', '-a', agents.guarded]),
      ])
      observe.expect(
        docOf(byHost)?.name === 'Compliance',
        'a bare host:port to read its well-known card',
        described(byHost),
      )
      observe.expect(docOf(byUrl)?.name === 'Compliance', 'a card URL to be read as given', described(byUrl))
      observe.expect(docOf(sdk)?.name === 'SDK v1 Echo', "the SDK agent's card to be read", described(sdk))
      for (const label of [
        'Agent',
        'Interface',
        'Streaming',
        'Push notifications',
        'Extended card',
        'Security',
        'Skill',
      ])
        observe.expect(field(text.stdout, label) !== undefined, `card get to show "${label}:"`, described(text))
      // The card saved to a file, read back by file:// URL and by path, and used to choose the transport of a send.
      const file = join(cwd, 'card.json')
      writeFileSync(file, JSON.stringify(docOf(byUrl)))
      const [byFileUrl, byPath, sent] = await Promise.all([
        run(['card', 'get', '-a', pathToFileURL(file).href, '-o', 'json']),
        run(['card', 'get', '-a', './card.json', '-o', 'json']),
        run(['send', '-a', './card.json', '-o', 'json', 'hello']),
      ])
      observe.expect(docOf(byFileUrl)?.name === 'Compliance', 'a file:// card to be read', described(byFileUrl))
      observe.expect(docOf(byPath)?.name === 'Compliance', 'a card path to be read', described(byPath))
      observe.expect(
        stateOf(sentTask(sent)) === 'TASK_STATE_COMPLETED',
        "send through a card file to reach the agent at the card's interface",
        described(sent),
      )
    },
  },
  {
    id: 'A2ACLI_CARD_GET_002',
    how: "card get --validate on this runtime's card (valid) and on a card with an empty description (invalid)",
    async run({ agents, run, raw }, observe) {
      const broken = await raw(() => ({ result: completedTask('t') }), { card: { description: '' } })
      const [valid, invalid, invalidText] = await Promise.all([
        run(['card', 'get', '--validate', '-a', agents.runtime, '-o', 'json']),
        run(['card', 'get', '--validate', '-a', broken.url, '-o', 'json']),
        run(['card', 'get', '--validate', '-a', broken.url]),
      ])
      observe.expect(valid.code === 0 && docOf(valid)?.name === 'Compliance', 'a valid card to pass', described(valid))
      const envelope = envelopeOf(invalid)
      observe.expect(
        invalid.code === 1 && envelope?.code === 'A2ACLI_ERR_CARD_INVALID' && /description/.test(envelope.message),
        'an invalid card to fail with A2ACLI_ERR_CARD_INVALID naming the field (exit 1)',
        described(invalid),
      )
      observe.expect(
        invalidText.code === 1 && /description/.test(invalidText.stderr),
        'the text form to name the field on stderr',
        described(invalidText),
      )
    },
  },
]
