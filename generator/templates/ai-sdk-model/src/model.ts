import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { APICallError, type LanguageModel, RetryError } from 'ai'

const OPENAI_URL = 'https://api.openai.com/v1'

/** A setting the model needs is missing; its message says which and where. */
export class ModelNotConfiguredError extends Error {
  override name = 'ModelNotConfiguredError'
}

/**
 * The chat model `.env` names: any OpenAI-compatible endpoint (OpenAI, a local Ollama or vLLM server, a gateway),
 * through the AI SDK's provider (Mastra runs AI SDK models as they are). Read at each message, so an edited `.env`
 * applies at once and a missing key fails the message, not the server.
 */
export function modelFromEnv(env: Record<string, string | undefined> = process.env): LanguageModel {
  const baseURL = (env.OPENAI_BASE_URL || OPENAI_URL).replace(/\/+$/, '')
  const apiKey = env.OPENAI_API_KEY || undefined
  // Local servers take no key; OpenAI and the gateways do.
  if (!apiKey && baseURL === OPENAI_URL)
    throw new ModelNotConfiguredError('The model is not configured: set OPENAI_API_KEY in .env (see .env.example).')
  return createOpenAICompatible({ name: 'model', baseURL, ...(apiKey && { apiKey }) }).chatModel(
    env.OPENAI_MODEL || 'gpt-4o-mini',
  )
}

/**
 * What the client reads when the model call fails: a missing setting, a refused key, an endpoint that cannot be
 * reached. Anything else gets the runtime's default reason (the error's class and HTTP status); the server's log
 * has every error in full. Never the provider's message: it may quote the prompt or part of the key.
 */
export function modelFailureReason(failure: unknown): string | undefined {
  if (failure instanceof ModelNotConfiguredError) return failure.message
  // The AI SDK retries a failed call twice, then reports the last failure inside a RetryError; Mastra, running the
  // same model without those retries, reports the provider's error as it is.
  const error = RetryError.isInstance(failure) ? failure.lastError : failure
  if (!APICallError.isInstance(error)) return undefined
  if (error.statusCode === 401 || error.statusCode === 403)
    return `The model endpoint refused the key (HTTP ${error.statusCode}): check OPENAI_API_KEY in .env`
  if (error.statusCode === undefined)
    return `Cannot reach the model endpoint ${new URL(error.url).origin}: check OPENAI_BASE_URL in .env`
  return undefined
}
