import { defineAgent } from 'a2a-runtime'

/** A small agent that shows the whole task lifecycle: progress, a streamed answer, completion. */
export default defineAgent({
  card: {
    name: 'Echo Agent',
    description: 'Repeats what you say, word by word.',
    version: '1.0.0',
    capabilities: { streaming: true },
    skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the message back', tags: ['demo'], examples: ['hello there'] }],
  },
  async execute(ctx, task) {
    task.working('Thinking about what you said…')
    const words = ctx.text.split(/\s+/).filter(Boolean)
    if (words.length === 0) {
      task.inputRequired('Say something and I will repeat it.')
      return
    }
    // Send the answer in chunks of one word, the way a model streams tokens.
    let artifactId
    for (const [i, word] of words.entries()) {
      if (ctx.signal.aborted) return
      await new Promise((resolve) => setTimeout(resolve, 20))
      artifactId = task.artifact(i === 0 ? word : ` ${word}`, { artifactId, append: i > 0, lastChunk: i === words.length - 1 })
    }
    task.complete()
  },
  cancel(_ctx, task) {
    task.cancel('Stopped on request.')
  },
})
