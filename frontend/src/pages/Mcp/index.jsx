import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import useMcpServers from '../../hooks/useMcpServers';
import { deleteMcpServer, testMcpServer, updateMcpServer } from '../../api/mcp';
import { showSuccess } from '../../lib/toast';
import { patchOptimistically } from '../../lib/rows';
import Modal, { ConfirmModal } from '../../components/Modal';
import TableState from '../../components/TableState';
import McpServerRow from './McpServerRow';
import EditMcpServer from './EditMcpServer';
import '../../styles/channel.css';

// What a test found: the tools the server lists (with whether the server's allow-list offers each), or why it failed.
function TestResult({ result, onClose }) {
  const { t } = useTranslation();
  const { server, tools, time, error } = result;
  return (
    <Modal title={t('mcp.testTitle', { name: server.name })} onClose={onClose} testId="mcp-test-result">
      {error ? (
        <div className="notification is-danger is-light" role="alert" data-testid="mcp-test-error">{error}</div>
      ) : (
        <>
          <p className="mb-3" data-testid="mcp-test-summary">{t('mcp.testSummary', { count: tools.length, time: (time / 1000).toFixed(2) })}</p>
          <table className="table is-fullwidth is-narrow">
            <thead><tr><th>{t('mcp.toolName')}</th><th>{t('mcp.description')}</th><th>{t('mcp.offered')}</th></tr></thead>
            <tbody>
              {tools.map((tool) => (
                <tr key={tool.name} data-testid="mcp-test-tool">
                  <td><code>{tool.name}</code></td>
                  <td className="is-size-7">{tool.description}</td>
                  <td>
                    {tool.offered
                      ? <span className="tag is-success is-light">{t('common.yes')}</span>
                      : <span className="tag is-light">{t('mcp.notOffered')}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Modal>
  );
}

export default function McpPage() {
  const { t } = useTranslation();
  const { items, isLoading, mutate } = useMcpServers();
  const [editing, setEditing] = useState(null);  // {id}: null id adds a server
  const [confirm, setConfirm] = useState(null);
  const [result, setResult] = useState(null);
  const [testing, setTesting] = useState(null);

  const guard = async (fn) => {
    try {
      await fn();
    } catch {
      /* toast shown by the client */
    }
  };

  const onTest = async (server) => {
    setTesting(server.id);
    try {
      const res = await testMcpServer(server.id);
      setResult({ server, tools: res.tools, time: res.time_ms });
    } catch (e) {
      setResult({ server, error: e.message });
    } finally {
      setTesting(null);
      mutate();  // the tool count and response time it measured
    }
  };

  const setStatus = (server, status) => guard(() => patchOptimistically(
    mutate, server.id, { status }, () => updateMcpServer({ id: server.id, status }).then(() => undefined))
    .then(() => showSuccess(t('common.operationSuccess'))));

  const onDelete = (server) => setConfirm({
    message: t('mcp.confirmDelete', { name: server.name }),
    action: () => guard(async () => {
      await deleteMcpServer(server.id);
      showSuccess(t('mcp.deleted', { name: server.name }));
      mutate();
    }),
  });

  return (
    <section>
      <h1 className="title is-4">{t('mcp.title')}</h1>
      <p className="mb-3 is-size-7" data-testid="mcp-intro">{t('mcp.intro')}</p>
      <div className="buttons" data-testid="mcp-toolbar">
        <button type="button" className="button is-primary" onClick={() => setEditing({ id: null })}>{t('mcp.add')}</button>
        <button type="button" className="button" onClick={() => mutate()}>{t('common.refresh')}</button>
      </div>
      <div className="table-container" tabIndex={0} role="region" aria-label={t('mcp.title')}>
        <table className="table is-fullwidth is-hoverable channel-table" data-testid="mcp-table" aria-busy={testing !== null}>
          <thead>
            <tr>
              <th>ID</th><th>{t('mcp.nameTransportGroups')}</th><th>{t('mcp.url')}</th><th>{t('mcp.tools')}</th>
              <th>{t('mcp.price')}</th><th>{t('mcp.statusResponseTime')}</th><th>{t('common.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((server) => (
              <McpServerRow key={server.id} server={server} onTest={() => onTest(server)} onEdit={() => setEditing({ id: server.id })}
                onDelete={() => onDelete(server)} onEnable={() => setStatus(server, 1)} onDisable={() => setStatus(server, 2)} />
            ))}
            <TableState loading={isLoading && items.length === 0} empty={!isLoading && items.length === 0} colSpan={7} />
          </tbody>
        </table>
      </div>
      {confirm && (
        <ConfirmModal danger message={confirm.message} onCancel={() => setConfirm(null)}
          onConfirm={() => { const { action } = confirm; setConfirm(null); action(); }} />
      )}
      {result && <TestResult result={result} onClose={() => setResult(null)} />}
      {editing && (
        <EditMcpServer id={editing.id} onClose={() => setEditing(null)} onSaved={() => { setEditing(null); mutate(); }} />
      )}
    </section>
  );
}
