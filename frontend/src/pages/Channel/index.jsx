import Placeholder from '../Placeholder';

export default function ChannelPage() {
  return <Placeholder titleKey="sidebar.channel" />;
}
