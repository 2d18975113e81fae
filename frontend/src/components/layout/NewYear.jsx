import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { showSuccess } from '../../lib/toast';
import { FIREWORKS_MS, RELOAD_MS, prefersReducedMotion } from '../../lib/newYear';

// Replaceable in tests (jsdom cannot reload).
export const page = {
  reload() {
    window.location.reload();
  },
};

const COLOURS = ['#ff4d4f', '#ffc53d', '#73d13d', '#40a9ff', '#f759ab', '#ffd666'];

// A red lantern (drawn: an emoji needs a font that a server or a kiosk may lack).
function Lantern() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      <path d="M12 0.5v3.5M12 20v3.5" stroke="#c8961e" strokeWidth="1.5" />
      <rect x="8" y="3.5" width="8" height="2.2" rx="0.6" fill="#d9a520" />
      <ellipse cx="12" cy="12.2" rx="8.5" ry="6.8" fill="#e0282e" />
      <path d="M12 5.6v13.2M8.4 6.3c-2.2 3.3-2.2 8.5 0 11.8M15.6 6.3c2.2 3.3 2.2 8.5 0 11.8" stroke="#ffd24d"
        strokeWidth="0.9" fill="none" />
      <rect x="8" y="18.4" width="8" height="2.2" rx="0.6" fill="#d9a520" />
    </svg>
  );
}

// Bursts of sparks drawn on a canvas over the page (it catches no click and is hidden from assistive technology).
function Fireworks() {
  const ref = useRef(null);
  useEffect(() => {
    const canvas = ref.current;
    let context = null;
    try {
      context = canvas.getContext('2d');
    } catch {
      /* no canvas support: nothing is drawn */
    }
    if (!context) return undefined;
    const fit = () => {
      canvas.width = window.innerWidth;
      canvas.height = window.innerHeight;
    };
    fit();
    let sparks = [];
    let lastBurst = -Infinity;
    let frame;
    const burst = () => {
      const x = canvas.width * (0.15 + 0.7 * Math.random());
      const y = canvas.height * (0.15 + 0.35 * Math.random());
      const colour = COLOURS[Math.floor(Math.random() * COLOURS.length)];
      for (let i = 0; i < 48; i += 1) {
        const angle = (2 * Math.PI * i) / 48;
        const speed = 1.5 + 3 * Math.random();
        sparks.push({ x, y, vx: Math.cos(angle) * speed, vy: Math.sin(angle) * speed, life: 1, colour });
      }
    };
    const tick = (time) => {
      if (time - lastBurst > 400) {
        burst();
        lastBurst = time;
      }
      context.clearRect(0, 0, canvas.width, canvas.height);
      sparks = sparks.filter((s) => s.life > 0);
      sparks.forEach((s) => {
        s.x += s.vx;
        s.y += s.vy;
        s.vy += 0.05;
        s.life -= 0.015;
        context.globalAlpha = Math.max(s.life, 0);
        context.fillStyle = s.colour;
        context.beginPath();
        context.arc(s.x, s.y, 2.5, 0, 2 * Math.PI);
        context.fill();
      });
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    window.addEventListener('resize', fit);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('resize', fit);
    };
  }, []);
  return <canvas ref={ref} className="fireworks" aria-hidden="true" data-testid="fireworks" />;
}

/*
 * The New Year easter egg (shown by the top bar on its days): a lantern button that wishes a happy new year and sets
 * off fireworks for 3 s (none when the reader prefers reduced motion). The page then reloads after 10 s, but only
 * when nothing was typed into it since it loaded: a reload never throws input away.
 */
export default function NewYear() {
  const { t } = useTranslation();
  const [playing, setPlaying] = useState(false);
  const typed = useRef(false);
  const timers = useRef([]);

  useEffect(() => {
    const mark = () => {
      typed.current = true;
    };
    document.addEventListener('input', mark, true);
    document.addEventListener('change', mark, true);
    const pending = timers.current;
    return () => {
      document.removeEventListener('input', mark, true);
      document.removeEventListener('change', mark, true);
      pending.forEach(clearTimeout);
    };
  }, []);

  const celebrate = () => {
    if (playing) return;
    showSuccess(t('shell.happyNewYear'));
    if (!prefersReducedMotion()) {
      setPlaying(true);
      timers.current.push(setTimeout(() => setPlaying(false), FIREWORKS_MS));
    }
    timers.current.push(setTimeout(() => {
      if (!typed.current) page.reload();
    }, RELOAD_MS));
  };

  return (
    <>
      <button type="button" className="button is-small" data-testid="new-year" aria-label={t('shell.newYear')}
        title={t('shell.newYear')} onClick={celebrate}>
        <Lantern />
      </button>
      {playing && <Fireworks />}
    </>
  );
}
