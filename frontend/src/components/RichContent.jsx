import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { loadedMarkdown, loadMarkdown } from '../lib/markdown';

// Admin-set content (home page, about, notice): a page in a frame when it is a URL, otherwise Markdown (HTML allowed),
// rendered and sanitised.
export function contentKind(content) {
  const text = String(content || '').trim();
  if (!text) return 'empty';
  if (/^https?:\/\/\S+$/i.test(text)) return 'url';
  return 'markdown';
}

export default function RichContent({ content, title, testId = 'rich-content', frameHeight = 800 }) {
  const { t } = useTranslation();
  const kind = contentKind(content);
  const [render, setRender] = useState(loadedMarkdown);
  useEffect(() => {
    if (kind !== 'markdown' || render) return undefined;
    let live = true;
    loadMarkdown().then((fn) => live && setRender(() => fn));
    return () => { live = false; };
  }, [kind, render]);
  const html = useMemo(() => (kind === 'markdown' && render ? render(content) : ''), [kind, content, render]);
  if (kind === 'empty') return null;
  if (kind === 'url') {
    return <iframe className="content-frame" title={title || t('shell.home')} src={content.trim()} width="100%" height={frameHeight}
      data-testid={`${testId}-frame`} />;
  }
  if (!render) return <div className="content" aria-busy="true" />;  // the Markdown parser is on its way
  // eslint-disable-next-line react/no-danger
  return <div className="content" data-testid={`${testId}-html`} dangerouslySetInnerHTML={{ __html: html }} />;
}
