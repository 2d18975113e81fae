import Placeholder from '../Placeholder';

export default function UserPage() {
  return <Placeholder titleKey="sidebar.user" />;
}
