// A text of the server's channel-type catalogue, {en, zh}, in the console's language: Chinese for any zh* language,
// English otherwise (each falls back on the other). A plain string is shown as is; null or missing gives ''.
export default function localized(text, language) {
  if (!text) return '';
  if (typeof text === 'string') return text;
  const zh = String(language || '').toLowerCase().startsWith('zh');
  return (zh ? text.zh || text.en : text.en || text.zh) || '';
}
