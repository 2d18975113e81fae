import Placeholder from '../Placeholder';

export default function SettingPage() {
  return <Placeholder titleKey="sidebar.setting" />;
}
