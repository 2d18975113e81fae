import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getStoredUser } from '../lib/storage';

// A finished video task played in the console: its bytes come from the gateway's console route
// (the session and the user header, which a <video src> cannot send), shown from a blob URL.
export default function VideoPlayer({ taskId }) {
  const { t } = useTranslation();
  const [src, setSrc] = useState(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let live = true;
    let url = null;
    const user = getStoredUser();
    const header = user && user.id !== undefined ? String(user.id) : '-1';
    fetch(`/api/task/video/${encodeURIComponent(taskId)}/content`, {
      headers: { 'New-Api-User': header }, credentials: 'same-origin',
    })
      .then(async (res) => {
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        const blob = await res.blob();
        if (!live) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      })
      .catch(() => {
        if (live) setFailed(true);
      });
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [taskId]);

  if (failed) return <p className="has-text-danger" data-testid="video-failed">{t('task.videoFailed')}</p>;
  if (!src) return <p data-testid="video-loading">{t('task.videoLoading')}</p>;
  // eslint-disable-next-line jsx-a11y/media-has-caption
  return <video controls src={src} data-testid="video-player" style={{ maxWidth: '100%' }} />;
}
