/** The `message/send` params the suites send: a user's text message, with `extra` merged into the message. */

let sent = 0
/** Unique within the run, so no two tests' messages collide in a shared store. */
const messageId = () => `m-${++sent}-${Math.random().toString(36).slice(2)}`

/** Platform and A2A v0.3 shape (the platform dialect takes it as it is; `kind` is v0.3's). */
export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { kind: 'message', role: 'user', messageId: messageId(), parts: [{ kind: 'text', text }], ...extra },
})

/** A2A v1.0 shape (ProtoJSON: `ROLE_USER`, parts without `kind`). */
export const userMessageV1 = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { role: 'ROLE_USER', messageId: messageId(), parts: [{ text }], ...extra },
})
