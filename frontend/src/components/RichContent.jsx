import { useTranslation } from 'react-i18next';

// Admin-set content (home page, about, notice): HTML when it starts with "<", a page in a frame when it is a URL,
// otherwise plain text.
export function contentKind(content) {
  const text = String(content || '').trim();
  if (!text) return 'empty';
  if (text.startsWith('<')) return 'html';
  if (/^https?:\/\/\S+$/i.test(text)) return 'url';
  return 'text';
}

export default function RichContent({ content, title, testId = 'rich-content', frameHeight = 800 }) {
  const { t } = useTranslation();
  const kind = contentKind(content);
  if (kind === 'empty') return null;
  if (kind === 'url') {
    return <iframe className="content-frame" title={title || t('shell.home')} src={content.trim()} width="100%" height={frameHeight}
      data-testid={`${testId}-frame`} />;
  }
  if (kind === 'html') {
    // eslint-disable-next-line react/no-danger
    return <div className="content" data-testid={`${testId}-html`} dangerouslySetInnerHTML={{ __html: content }} />;
  }
  return <div className="content pre-wrap" data-testid={testId}>{content}</div>;
}
