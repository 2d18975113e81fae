import { marked } from 'marked';
import DOMPurify from 'dompurify';

// Admin-written content (notice, home page, about) is Markdown with HTML allowed: rendered by marked, then
// sanitised by DOMPurify (no script, no event handler, no javascript: URL), whoever wrote it.
export function renderMarkdown(text) {
  const html = marked.parse(String(text || ''), { async: false, gfm: true, breaks: true });
  return DOMPurify.sanitize(html, { ADD_ATTR: ['target'] });
}

// Admin-written HTML (the footer): kept as written, minus what could run script.
export function sanitizeHtml(html) {
  return DOMPurify.sanitize(String(html || ''), { ADD_ATTR: ['target'] });
}
