import { type AgentDefinition, createA2AApp, defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { agent } from './_agents.ts'
import { nodeServer } from './_transports.ts'

/** The authenticated extended card: more skills for callers who prove who they are, none of it in the public card. */

const KEY = { 'x-api-key': 'key-extended-5e2a' }
const publicSkill = { id: 'forecast', name: 'Forecast', description: 'Weather for a city', tags: ['weather'] }
const partnerSkill = { id: 'bulk', name: 'Bulk forecast', description: 'Weather for many cities', tags: ['weather'] }

const withExtended = agent((_ctx, task) => task.complete(), {
  card: {
    skills: [publicSkill],
    authentication: { schemes: ['apiKey'] },
    extendedCard: { skills: [partnerSkill], description: 'Tells the weather; partners get bulk forecasts too' },
  },
})

describe('the authenticated extended card', () => {
  it('the public cards say there is one and list only the public skills; callers with a credential get it', async () => {
    const target = await nodeServer.start(withExtended, { auth: { apiKeys: ['key-extended-5e2a'] } })
    const v1Card = await (
      await target.fetch('/.well-known/agent-card.json', { headers: { 'a2a-version': '1.0' } })
    ).json()
    expect(v1Card.capabilities.extendedAgentCard).toBe(true)
    expect(v1Card.skills.map((skill: { id: string }) => skill.id)).toEqual(['forecast'])
    const v03Card = await (await target.fetch('/.well-known/agent-card.json')).json()
    expect(v03Card.supportsAuthenticatedExtendedCard).toBe(true)
    expect(JSON.stringify(v03Card)).not.toContain('bulk')
    const platform = await (await target.fetch('/.well-known/agent.json')).json()
    expect(JSON.stringify(platform)).not.toContain('bulk')
    expect(platform).not.toHaveProperty('extendedCard')

    const v1 = await target.rpc('GetExtendedAgentCard', {}, { headers: { ...KEY, 'a2a-version': '1.0' } })
    expect(v1.body.result.skills.map((skill: { id: string }) => skill.id)).toEqual(['forecast', 'bulk'])
    expect(v1.body.result.description).toBe('Tells the weather; partners get bulk forecasts too')
    expect(v1.body.result.securitySchemes).toEqual(v1Card.securitySchemes)
    expect(v1.body.result.supportedInterfaces).toEqual(v1Card.supportedInterfaces)
    const v03 = await target.rpc(
      'agent/getAuthenticatedExtendedCard',
      {},
      { headers: { ...KEY, 'a2a-version': '0.3' } },
    )
    expect(v03.body.result.skills.map((skill: { id: string }) => skill.id)).toEqual(['forecast', 'bulk'])
    expect(v03.body.result.protocolVersion).toBe('0.3.0')

    for (const [method, version] of [
      ['GetExtendedAgentCard', '1.0'],
      ['agent/getAuthenticatedExtendedCard', '0.3'],
    ]) {
      const refused = await target.rpc(method!, {}, { headers: { 'a2a-version': version! } })
      expect(refused.status, method).toBe(401)
      expect(JSON.stringify(refused.body), method).not.toContain('bulk')
      const wrong = await target.rpc(method!, {}, { headers: { 'x-api-key': 'guess', 'a2a-version': version! } })
      expect(wrong.status, method).toBe(401)
    }
  })

  it('an agent without one answers UnsupportedOperation over v1.0 (its card declares none) and -32007 over v0.3, and its public card does not claim one', async () => {
    const target = await nodeServer.start(agent((_ctx, task) => task.complete()))
    const reply = await target.rpc('GetExtendedAgentCard', {}, { headers: { 'a2a-version': '1.0' } })
    expect(reply.body.error.code).toBe(-32004)
    const v03 = await target.rpc('agent/getAuthenticatedExtendedCard', {}, { headers: { 'a2a-version': '0.3' } })
    expect(v03.body.error.code).toBe(-32007)
    const card = await (
      await target.fetch('/.well-known/agent-card.json', { headers: { 'a2a-version': '1.0' } })
    ).json()
    expect(card.capabilities).not.toHaveProperty('extendedAgentCard')
  })

  it('the app refuses one without authentication, repeating a public skill id, or without skills, naming the field', () => {
    type Card = AgentDefinition['card']
    const serve = (card: Card) =>
      createA2AApp(defineAgent({ card, execute: () => {} }), { auth: { apiKeys: ['k'] }, env: {} })
    const card = { name: 'Weather', description: 'Tells the weather for a city', skills: [publicSkill] }
    const authenticated = { ...card, authentication: { schemes: ['apiKey' as const] } }
    expect(() => serve({ ...card, extendedCard: { skills: [partnerSkill] } })).toThrow(
      'Agent card: `extendedCard` needs authentication: only authenticated callers get the extended card',
    )
    expect(() => serve({ ...authenticated, extendedCard: { skills: [publicSkill] } })).toThrow(
      'Agent card: `extendedCard.skills[0].id` repeats the id "forecast"; skill ids must be unique',
    )
    expect(() => serve({ ...authenticated, extendedCard: { skills: [] } })).toThrow(
      'Agent card: `extendedCard.skills` must be a non-empty array of skills',
    )
  })
})
