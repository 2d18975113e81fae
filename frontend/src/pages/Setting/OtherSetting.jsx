import { useTranslation } from 'react-i18next';
import useOptions from '../../hooks/useOptions';
import OptionCard from './OptionCard';

export const OTHER_CARDS = {
  notice: [{ key: 'Notice', type: 'textarea', help: 'option.help.Notice' }],
  systemName: [{ key: 'SystemName' }],
  logo: [{ key: 'Logo' }],
  homePage: [{ key: 'HomePageContent', type: 'textarea', rows: 8, help: 'option.help.HomePageContent' }],
  about: [{ key: 'About', type: 'textarea', rows: 8, help: 'option.help.About' }],
  footer: [{ key: 'Footer', type: 'textarea', help: 'option.help.Footer' }],
};

export default function OtherSetting() {
  const { t } = useTranslation();
  const { options, loaded, mutate } = useOptions();
  if (!loaded) return <progress className="progress is-small is-primary" />;
  return (
    <div>
      {Object.keys(OTHER_CARDS).map((name) => (
        <OptionCard key={name} testId={`card-${name}`} title={t(`setting.card.${name}`)} fields={OTHER_CARDS[name]}
          options={options} onSaved={mutate} />
      ))}
    </div>
  );
}
