import { Marked } from 'marked'
import { useMemo } from 'preact/hooks'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
export const SAFE_URL = /^(?:https?:|mailto:|#|\/(?!\/))/i

/**
 * Markdown as an agent writes it, never as a way into the page: raw HTML is shown as text, and links or images
 * other than http(s), mail and same-page ones become plain text.
 */
const markdown = new Marked({
  gfm: true,
  breaks: true,
  // After an inline tag such as <kbd> marked passes the text that follows as already escaped ("raw"): escape it all
  // the same, or `<kbd><img/src=x/onerror=…>` would reach the page as an element.
  walkTokens(token) {
    if (token.type === 'text' && 'escaped' in token && token.escaped) {
      token.text = escapeHtml(token.text)
      token.escaped = false
    }
  },
  renderer: {
    html: ({ text }) => escapeHtml(text),
    // Links open beside the inspector, which keeps its conversation and timelines in memory only.
    link({ href, text }) {
      return SAFE_URL.test(href)
        ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${escapeHtml(text)}</a>`
        : escapeHtml(text)
    },
    image: ({ href, text }) =>
      SAFE_URL.test(href)
        ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${escapeHtml(text || href)}</a>`
        : escapeHtml(text),
  },
})

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => markdown.parse(text, { async: false }), [text])
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />
}
