import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import zh from './zh.json';
import en from './en.json';
import { KEYS } from '../lib/storage';

export const LANGUAGES = ['zh', 'en'];

// Stored choice first, then the browser's language; Chinese for any zh-* locale, English otherwise.
export function detectLanguage() {
  const stored = localStorage.getItem(KEYS.language);
  if (LANGUAGES.includes(stored)) return stored;
  const browser = (navigator.languages && navigator.languages[0]) || navigator.language || 'en';
  return browser.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export function changeLanguage(lang) {
  localStorage.setItem(KEYS.language, lang);
  return i18n.changeLanguage(lang);
}

i18n.use(initReactI18next).init({
  resources: { zh: { translation: zh }, en: { translation: en } },
  lng: detectLanguage(),
  fallbackLng: 'en',
  interpolation: { escapeValue: false },
  initAsync: false,
  returnNull: false,
  showSupportNotice: false,
});

// <html lang> follows the language (screen readers, fonts, hyphenation), from the first render on.
document.documentElement.setAttribute('lang', i18n.language);
i18n.on('languageChanged', (lng) => document.documentElement.setAttribute('lang', lng));

export default i18n;
