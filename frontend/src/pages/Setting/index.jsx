import { useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../context/UserContext';
import { isRoot } from '../../lib/auth';
import PersonalSetting from './PersonalSetting';
import OperationSetting from './OperationSetting';
import SystemSetting from './SystemSetting';
import OtherSetting from './OtherSetting';

const TABS = { personal: PersonalSetting, operation: OperationSetting, system: SystemSetting, other: OtherSetting };
const ROOT_TABS = ['operation', 'system', 'other'];

// /setting?tab=personal|operation|system|other; the last three for the super admin only.
export default function SettingPage() {
  const { t } = useTranslation();
  const { user } = useUser();
  const [searchParams, setSearchParams] = useSearchParams();
  const root = isRoot(user);
  const visible = Object.keys(TABS).filter((tab) => root || !ROOT_TABS.includes(tab));
  const requested = searchParams.get('tab');
  const tab = visible.includes(requested) ? requested : 'personal';
  const Tab = TABS[tab];
  return (
    <section>
      <h1 className="title is-4">{t('sidebar.setting')}</h1>
      <div className="tabs">
        <ul role="tablist" aria-label={t('setting.tabs')}>
          {visible.map((name) => (
            <li key={name} role="presentation" className={name === tab ? 'is-active' : undefined}>
              <a href={`?tab=${name}`} role="tab" id={`setting-tab-${name}`} aria-selected={name === tab}
                aria-controls="setting-panel" onClick={(e) => { e.preventDefault(); setSearchParams({ tab: name }); }}>
                {t(`setting.tab.${name}`)}
              </a>
            </li>
          ))}
        </ul>
      </div>
      <div role="tabpanel" id="setting-panel" aria-labelledby={`setting-tab-${tab}`}>
        <Tab />
      </div>
    </section>
  );
}
