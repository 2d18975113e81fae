import { useTranslation } from 'react-i18next';
import { renderQuota, timestamp2string } from '../../lib/format';
import {
  firstTokenLevel, LEVEL_COLORS, LOG_TYPE, LOG_TYPE_COLORS, totalTimeLevel, TRANSLATED_ERROR_CODES,
} from '../../constants/log';
import Popover from '../../components/Popover';
import PriceDetail, { parseOther } from './PriceDetail';
import RealtimePriceDetail from './RealtimePriceDetail';
import { describeLog } from '../../lib/logText';

export function LogTypeTag({ type }) {
  const { t } = useTranslation();
  return <span className={`tag ${LOG_TYPE_COLORS[type] || 'is-light'}`}>{t(`log.type.${LOG_TYPE_COLORS[type] ? type : 'unknown'}`)}</span>;
}

function Timing({ log, other }) {
  const { t } = useTranslation();
  const total = Number(log.use_time || 0);
  const level = totalTimeLevel(total);
  const frt = Number(other.frt || 0) / 1000;
  // use_time is whole seconds (rounded down): a call shorter than a second, or than its first token's time plus the
  // rest of that second, says "< n s" (never "0 s" beside a "0.2 s" first token).
  const totalText = total < 1 || (log.is_stream && frt > total)
    ? t('log.secondsUnder', { time: total + 1 }) : t('log.seconds', { time: total });
  return (
    <div className="tags mb-0">
      <span className={`tag ${LEVEL_COLORS[level]}`} data-testid="use-time" data-level={level}>{totalText}</span>
      {log.is_stream && frt > 0 && (
        <span className={`tag ${LEVEL_COLORS[firstTokenLevel(frt)]}`} data-testid="first-token-time" data-level={firstTokenLevel(frt)}>
          {t('log.seconds', { time: frt.toFixed(1) })}
        </span>
      )}
      <span className={`tag ${log.is_stream ? 'is-info' : 'is-link'} is-light`} data-testid="stream-badge">
        {log.is_stream ? t('log.stream') : t('log.nonStream')}
      </span>
    </div>
  );
}

// A cost as signed: a refund is a negative cost (the charge given back).
function signedQuota(quota) {
  return quota < 0 ? `-${renderQuota(-quota, 6)}` : renderQuota(quota, 6);
}

// A failed call: its status and its reason, both in the row (not only in a hover title).
function ErrorDetail({ log, other }) {
  const { t } = useTranslation();
  const code = other.error_code || '';
  const reason = TRANSLATED_ERROR_CODES.includes(code)
    ? t(`log.errorReason.${code}`, { model: log.model_name, group: log.group || 'default' })
    : log.content;
  return (
    <>
      {other.status_code ? (
        <span className="tag is-danger mr-1" data-testid="log-error-status">{t('log.errorStatus', { status: other.status_code })}</span>
      ) : null}
      <span className="pre-wrap" data-testid="log-content">{reason}</span>
    </>
  );
}

// A time as its day and its clock, each kept on one line (a narrow column wraps between them, not inside the day).
function When({ ts }) {
  const [day, clock] = (timestamp2string(ts) || '').split(' ');
  return <><span className="log-nowrap">{day}</span>{clock && <> <span className="log-nowrap">{clock}</span></>}</>;
}

// The secondary columns folded into the details on a phone, each under its column's name.
function Folded({ log, admin, consume, other, used, onUser }) {
  const { t } = useTranslation();
  const facts = [
    admin && log.channel ? ['channel', <span className="tag is-light">{log.channel}</span>] : null,
    admin && log.username ? ['user', (
      <button type="button" className="button is-small is-ghost p-0" onClick={() => onUser(log)}>{log.username}</button>
    )] : null,
    log.model_name ? ['model', <span className="tag is-light">{log.model_name}</span>] : null,
    log.quota ? ['cost', <span data-testid="log-cost">{signedQuota(log.quota)}</span>] : null,
    log.token_name ? ['token', log.token_name] : null,
    consume ? ['timing', <Timing log={log} other={other} />] : null,
    consume ? ['prompt', log.prompt_tokens || 0] : null,
    consume ? ['completion', log.completion_tokens || 0] : null,
    admin && used.length > 1 ? ['retry', used.join(' → ')] : null,
  ].filter(Boolean);
  return (
    <dl className="log-folded mb-1" data-testid="log-folded">
      {facts.map(([column, value]) => (
        <div key={column}><dt>{t(`log.column.${column}`)}</dt><dd>{value}</dd></div>
      ))}
    </dl>
  );
}

// `compact` (a phone): two columns, the time with the type below it, and the details, into which the others fold.
export default function LogRow({ log, admin, onUser, compact = false }) {
  const { t } = useTranslation();
  const other = parseOther(log.other);
  const consume = log.type === LOG_TYPE.CONSUME;
  const failed = log.type === LOG_TYPE.ERROR;
  const refund = log.refund_of !== undefined;
  const used = (other.admin_info && other.admin_info.use_channel) || [];
  const wide = !compact;
  const typeTags = (
    <div className="tags mb-0 log-type-tags">
      <LogTypeTag type={log.type} />
      {refund && <span className="tag is-success" data-testid="log-refund-tag">{t('log.refundTag')}</span>}
      {log.refunded ? (
        <span className="tag is-warning" data-testid="log-refunded-tag">{t('log.refundedTag')}</span>
      ) : null}
    </div>
  );
  return (
    <tr data-testid={`log-row-${log.id}`}>
      <td className="is-size-7">
        <When ts={log.created_at} />
        {compact && typeTags}
      </td>
      {wide && admin && <td>{log.channel ? <span className="tag is-light">{log.channel}</span> : null}</td>}
      {wide && admin && (
        <td>
          {log.username && (
            <button type="button" className="button is-small is-ghost p-0" onClick={() => onUser(log)}>{log.username}</button>
          )}
        </td>
      )}
      {wide && <td>{log.token_name && <span className="tag is-light">{log.token_name}</span>}</td>}
      {wide && <td className="log-type">{typeTags}</td>}
      {wide && <td>{log.model_name && <span className="tag is-light">{log.model_name}</span>}</td>}
      {wide && <td className="log-timing">{consume && <Timing log={log} other={other} />}</td>}
      {wide && <td>{consume ? log.prompt_tokens || 0 : ''}</td>}
      {wide && <td>{consume ? log.completion_tokens || 0 : ''}</td>}
      {wide && <td className="log-nowrap" data-testid="log-cost">{log.quota ? signedQuota(log.quota) : ''}</td>}
      {wide && admin && <td className="is-size-7" data-testid="log-retry">{used.length > 1 ? used.join(' → ') : ''}</td>}
      <td className="is-size-7 log-details">
        {compact && <Folded log={log} admin={admin} consume={consume} other={other} used={used} onUser={onUser} />}
        {failed ? <ErrorDetail log={log} other={other} />
          : <span className="pre-wrap" data-testid="log-content">{describeLog(log, other, t, consume)}</span>}
        {consume && (other.model_ratio !== undefined || other.model_price !== undefined) && (
          <Popover label={t('log.priceDetail')} ariaLabel={t('log.priceDetailOf', { id: log.id })} testId={`price-detail-${log.id}`}
            buttonClassName="button is-small is-ghost p-0 ml-1">
            {other.realtime ? <RealtimePriceDetail log={log} other={other} /> : <PriceDetail log={log} other={other} />}
          </Popover>
        )}
      </td>
    </tr>
  );
}
