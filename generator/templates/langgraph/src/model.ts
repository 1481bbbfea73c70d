import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { ChatOpenAI } from '@langchain/openai'

const OPENAI_URL = 'https://api.openai.com/v1'

/** A setting the model needs is missing; its message says which and where. */
export class ModelNotConfiguredError extends Error {
  override name = 'ModelNotConfiguredError'
}

/**
 * The chat model `.env` names: any OpenAI-compatible endpoint (OpenAI, a local Ollama or vLLM server, a gateway),
 * through LangChain's ChatOpenAI. Read at each model call, so an edited `.env` applies at once and a missing key
 * fails the message, not the server.
 */
export function modelFromEnv(env: Record<string, string | undefined> = process.env): BaseChatModel {
  const baseURL = (env.OPENAI_BASE_URL || OPENAI_URL).replace(/\/+$/, '')
  const apiKey = env.OPENAI_API_KEY || undefined
  // Local servers take no key; OpenAI and the gateways do.
  if (!apiKey && baseURL === OPENAI_URL)
    throw new ModelNotConfiguredError('The model is not configured: set OPENAI_API_KEY in .env (see .env.example).')
  return new ChatOpenAI({
    model: env.OPENAI_MODEL || 'gpt-4o-mini',
    // The OpenAI client wants a key even where none is needed: a placeholder for a local server.
    apiKey: apiKey ?? 'no-key',
    configuration: { baseURL },
    // A failed call is tried twice more (never a refused key), not LangChain's default six times.
    maxRetries: 2,
  })
}

/**
 * What the client reads when the model call fails: a missing setting, a refused key, an endpoint that cannot be
 * reached. Anything else gets the runtime's default reason (the error's class and HTTP status); the server's log
 * has every error in full. Never the provider's message: it may quote the prompt or part of the key.
 */
export function modelFailureReason(
  failure: unknown,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  if (failure instanceof ModelNotConfiguredError) return failure.message
  const status = (failure as { status?: unknown } | null)?.status
  if (status === 401 || status === 403)
    return `The model endpoint refused the key (HTTP ${status}): check OPENAI_API_KEY in .env`
  // The OpenAI client's error (its class, kept by LangChain) for a request that got no answer: nothing listens there,
  // or the network is down.
  if (failure instanceof Error && failure.constructor.name === 'APIConnectionError')
    return `Cannot reach the model endpoint ${new URL(env.OPENAI_BASE_URL || OPENAI_URL).origin}: check OPENAI_BASE_URL in .env`
  return undefined
}
