/** Server-Sent Events read from a fetch() body: the agent's streams, and the dev server's live channel. */

/** The blank line that ends an SSE frame, with any of the line endings SSE allows. */
const FRAME_END = /\r?\n\r?\n/

/** Hands over each frame's raw text as it completes; resolves when the body ends, rejects when it breaks. */
export async function readFrames(body: NonNullable<Response['body']>, onFrame: (frame: string) => void): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    // Only the new text (and the 3 characters before it) can hold a frame's end: large frames stay linear.
    let from = Math.max(0, buffered.length - 3)
    buffered += value
    for (let match = FRAME_END.exec(buffered.slice(from)); match; match = FRAME_END.exec(buffered.slice(from))) {
      const end = from + match.index
      const frame = buffered.slice(0, end)
      buffered = buffered.slice(end + match[0].length)
      from = 0
      onFrame(frame)
    }
  }
}

/** A frame's fields: its event name (`message` when none), its data lines joined, its `id:`. */
export function fieldsOf(frame: string): { event: string; data: string; id: string | undefined } {
  const lines = frame.split(/\r?\n/)
  const field = (name: string) =>
    lines
      .filter((line) => line.startsWith(`${name}:`))
      .map((line) => line.slice(name.length + (line[name.length + 1] === ' ' ? 2 : 1)))
  return { event: field('event')[0] ?? 'message', data: field('data').join('\n'), id: field('id')[0]?.trim() }
}
