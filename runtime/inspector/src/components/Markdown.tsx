import { Marked } from 'marked'
import { useMemo } from 'preact/hooks'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const SAFE_URL = /^(?:https?:|mailto:|#|\/(?!\/))/i

/**
 * Markdown as an agent writes it, never as a way into the page: raw HTML is shown as text, and links or images
 * other than http(s), mail and same-page ones become plain text.
 */
const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    link(token) {
      if (SAFE_URL.test(token.href)) return false
      return escapeHtml(token.text)
    },
    image: ({ href, text }) => (SAFE_URL.test(href) ? `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>` : escapeHtml(text)),
  },
})

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => markdown.parse(text, { async: false }), [text])
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />
}
