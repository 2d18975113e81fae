import DOMPurify from 'dompurify';

// Admin-written content (notice, home page, about) is Markdown with HTML allowed: rendered by marked, then
// sanitised by DOMPurify (no script, no event handler, no javascript: URL), whoever wrote it. The Markdown parser
// loads on first use (only pages with such content need it): loadMarkdown() resolves to the renderer.
let renderer = null;
export const loadedMarkdown = () => renderer;
export async function loadMarkdown() {
  if (!renderer) {
    const { marked } = await import('marked');
    renderer = (text) => DOMPurify.sanitize(marked.parse(String(text || ''), { async: false, gfm: true, breaks: true }),
      { ADD_ATTR: ['target'] });
  }
  return renderer;
}

// Admin-written HTML (the footer): kept as written, minus what could run script.
export function sanitizeHtml(html) {
  return DOMPurify.sanitize(String(html || ''), { ADD_ATTR: ['target'] });
}
