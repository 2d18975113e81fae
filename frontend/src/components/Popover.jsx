import { useEffect, useRef, useState } from 'react';

// A click-toggled Bulma dropdown used as a popover (Bulma has none); closes on an outside click or Escape
// (Escape then closes this popover only, not a dialog it sits in, and focus goes back to its button).
// `children` is the content, or a function (close) => content for menus.
export default function Popover({ label, children, buttonClassName = 'button is-small', testId, ariaLabel, right }) {
  const [open, setOpen] = useState(false);
  const ref = useRef(null);
  const trigger = useRef(null);
  useEffect(() => {
    if (!open) return undefined;
    const onOutside = (e) => {
      if (ref.current && !ref.current.contains(e.target)) setOpen(false);
    };
    const onKey = (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented || (ref.current && ref.current.closest('[inert]'))) return;
      e.preventDefault(); // seen first (capture): a dialog underneath stays open
      if (ref.current && ref.current.contains(document.activeElement) && trigger.current) trigger.current.focus();
      setOpen(false);
    };
    // Closed after an outside click has done its work (closing on mousedown would move the clicked button away).
    document.addEventListener('click', onOutside);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('click', onOutside);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [open]);
  const close = () => setOpen(false);
  return (
    <div ref={ref} className={`dropdown ${open ? 'is-active' : ''} ${right ? 'is-right' : ''}`}>
      <div className="dropdown-trigger">
        <button ref={trigger} type="button" className={buttonClassName} aria-haspopup="true" aria-expanded={open} aria-label={ariaLabel}
          onClick={() => setOpen(!open)}>
          {label}
        </button>
      </div>
      {open && (
        <div className="dropdown-menu popover-menu" role="dialog" aria-label={ariaLabel || (typeof label === 'string' ? label : undefined)}
          data-testid={testId}>
          <div className="dropdown-content">
            {typeof children === 'function' ? children(close) : <div className="dropdown-item">{children}</div>}
          </div>
        </div>
      )}
    </div>
  );
}
