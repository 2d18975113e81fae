import { useTranslation } from 'react-i18next';

// The ratio explanation image of the pricing page (public/ratio-explanation.<language>.svg): how model ratio, group
// ratio and tokens make a call's cost, with a worked example; its text alternative says the same.
export default function RatioExplanation() {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage === 'zh' ? 'zh' : 'en';
  return (
    <figure className="image ratio-explanation" data-testid="ratio-explanation">
      <img src={`/ratio-explanation.${lang}.svg`} alt={t('pricing.ratioImageAlt')} width={760} height={250} />
    </figure>
  );
}
