import { useParams } from 'react-router-dom';
import OAuthCallback from '../../pages/OAuthCallback';

// /oauth/{slug}: the callback page of a custom provider, the same exchange as the built-in ones.
export default function CustomOAuthCallback() {
  const { slug } = useParams();
  return <OAuthCallback provider={slug} />;
}
