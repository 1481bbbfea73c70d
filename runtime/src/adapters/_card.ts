import type { AgentCardInput, AgentSkill } from '../types.js'

/** What an adapter can read off a framework's agent for its card. */
export interface FrameworkAgentFacts {
  name?: string
  description?: string
  /** The agent's tools: shown on the card as the skill's tags, their descriptions as examples of what it can do. */
  tools: Array<{ name: string; description?: string }>
}

/**
 * The card of an adapted agent: what the caller gives wins; the rest comes from the framework's agent (its name,
 * its description, a skill whose tags are its tools), so one line serves a working card.
 */
export function adapterCard(
  facts: FrameworkAgentFacts,
  given: Partial<AgentCardInput> | undefined,
  framework: string,
): AgentCardInput {
  const name = given?.name ?? facts.name ?? `${framework} agent`
  const description = given?.description ?? facts.description ?? `An agent built with ${framework}`
  return { ...given, name, description, skills: given?.skills ?? [derivedSkill(name, description, facts.tools)] }
}

function derivedSkill(name: string, description: string, tools: FrameworkAgentFacts['tools']): AgentSkill {
  const examples = tools.flatMap((tool) => (tool.description ? [tool.description] : []))
  return {
    id: slug(name),
    name,
    // A long system prompt is no skill description: the first sentence of it at most.
    description: firstSentence(description),
    tags: tools.map((tool) => tool.name),
    ...(examples.length > 0 && { examples }),
  }
}

const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'agent'

function firstSentence(text: string): string {
  const end = text.search(/[.!?](\s|$)/)
  const sentence = end === -1 ? text : text.slice(0, end + 1)
  return sentence.length > 300 ? `${sentence.slice(0, 299)}…` : sentence
}
