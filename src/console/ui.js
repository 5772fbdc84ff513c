// Shared pieces of the console's pages: errors as the API gave them, progress, empty states, tables,
// charts (Chart.js), CSV, and the hook that loads data for a page.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);

/** An API error with its status, code, message and, for filters, the entry and column it points at. */
export function ErrorBox({ error, title = 'The request failed' }) {
  if (!error) return null;
  const details = (error.details ?? []).filter((detail) => detail && typeof detail === 'object');
  return html`<div class="error" role="alert">
    <strong>${title}</strong>
    <div>${error.status ? html`<code>${error.status} ${error.code}</code> ` : null}${error.message}</div>
    ${error.status === 403 ? html`<div>This key lacks the scope for it: ask for a key with the <code>write</code> scope.</div>` : null}
    ${details.length > 0 ? html`<ul>${details.map((detail) => html`<li>${describeDetail(detail)}</li>`)}</ul>` : null}
  </div>`;
}

function describeDetail(detail) {
  const where = [detail.parameter, detail.entry !== undefined ? `entry ${detail.entry}` : null, detail.column !== undefined ? `column ${detail.column}` : null].filter(Boolean).join(', ');
  const text = detail.text !== undefined ? ` at “${detail.text}”` : '';
  const expected = detail.expected !== undefined ? `; expected ${Array.isArray(detail.expected) ? detail.expected.join(', ') : detail.expected}` : '';
  const head = `${where}${text}${expected}`;
  if (!detail.message) return head;
  return head === '' ? detail.message : `${head}: ${detail.message}`;
}

export function Progress({ label, elapsedMs }) {
  return html`<div class="progress" role="status"><span class="spinner"></span>${label}${elapsedMs ? ` (${(elapsedMs / 1000).toFixed(1)} s)` : '…'}</div>`;
}

export function Empty({ children }) {
  return html`<div class="empty">${children}</div>`;
}

/**
 * A report that did not succeed, with its state and why (JVM and code reports give stateMessages, component
 * reports errors): FAILED has no data, so its emptiness must not read as an empty fleet; PARTIALLY_FAILED and
 * TIMED_OUT hold only part of it.
 */
export function ReportState({ report }) {
  if (report.state === 'SUCCEEDED') return null;
  const messages = report.stateMessages ?? (report.errors ?? []).map((error) => error.message);
  const meaning = report.state === 'FAILED' ? 'It has no data: nothing is shown for it.' : 'Its data is partial: what is shown leaves out what failed.';
  const why = messages.length > 0 ? `${messages.join('; ')}. ` : '';
  return html`<${ErrorBox} error=${{ status: 0, message: `${why}${meaning}` }} title=${`Report ${report.reportId.slice(0, 8)} ${report.state}`} />`;
}

/** Whether a finished report's data is only part of the answer (shown with the figures it gives). */
export const isPartial = (report) => report.state === 'PARTIALLY_FAILED' || report.state === 'TIMED_OUT';

/** What to do when the fleet has no VM yet. */
export function ConnectHint() {
  return html`<${Empty}>
    <p>No JVM has reported yet. Connect one with the agent:</p>
    <pre>java -javaagent:jvmlens-agent.jar=gateway=GATEWAY_URL,apiKeyFile=/etc/jvmlens/agent.key -jar app.jar</pre>
    <p>GATEWAY_URL is the service's gateway, which the console cannot see: the API answers on another port. The service prints it when it starts (<code>jvmlens: gateway http://…</code>); its port is <code>--gateway-port</code>.</p>
    <p>The README's “Connecting JVMs” section has the options, and examples for Tomcat.</p>
  <//>`;
}

/**
 * Loads data for a page: `load(progress)` runs when `deps` change; the state is {loading, error, data, elapsedMs}.
 * A load superseded by a newer one is ignored.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ loading: true, error: null, data: null, elapsedMs: 0 });
  useEffect(() => {
    const signal = { cancelled: false };
    setState({ loading: true, error: null, data: null, elapsedMs: 0 });
    const progress = (elapsedMs) => !signal.cancelled && setState((previous) => ({ ...previous, elapsedMs }));
    load(progress, signal).then(
      (data) => !signal.cancelled && setState({ loading: false, error: null, data, elapsedMs: 0 }),
      (error) => !signal.cancelled && setState({ loading: false, error, data: null, elapsedMs: 0 }),
    );
    return () => (signal.cancelled = true);
  }, deps);
  return state;
}

/** A form's draft of values the URL holds: it follows the URL when that changes (Back, a hash edited by hand). */
export function useDraft(values) {
  const [draft, setDraft] = useState(values);
  useEffect(() => setDraft(values), [JSON.stringify(values)]);
  return [draft, setDraft];
}

/**
 * A table of rows; `columns` are [label, value(row) → text or element]; at most `limit` rows are drawn, and
 * `more` (the report's downloads) is offered for all of them.
 */
export function Table({ columns, rows, limit = 500, onRow, testId, more }) {
  const shown = rows.slice(0, limit);
  return html`<div class="table-wrap">
    <table data-testid=${testId}>
      <thead><tr>${columns.map(([label]) => html`<th>${label}</th>`)}</tr></thead>
      <tbody>${shown.map((row) => html`<tr class=${onRow ? 'clickable' : ''} onClick=${onRow ? () => onRow(row) : undefined}>${columns.map(([, value]) => html`<td>${value(row)}</td>`)}</tr>`)}</tbody>
    </table>
    ${rows.length > limit ? html`<p class="note">Showing ${limit} of ${rows.length.toLocaleString()} rows.${more ? html` All of them: ${more}` : null}</p>` : null}
  </div>`;
}

const PALETTE = ['#2f6fb3', '#e0803c', '#3a9d5d', '#c0504d', '#8064a2', '#4bacc6', '#9b8b3c', '#d16fa0'];

/** A bar chart of labelled counts; clicking a bar calls onPick(index). */
export function BarChart({ labels, values, onPick, label = 'VMs' }) {
  const canvas = useRef(null);
  useEffect(() => {
    const chart = new window.Chart(canvas.current, {
      type: 'bar',
      data: { labels, datasets: [{ label, data: values, backgroundColor: labels.map((_, i) => PALETTE[i % PALETTE.length]) }] },
      options: {
        animation: false,
        maintainAspectRatio: false,
        indexAxis: labels.length > 6 ? 'y' : 'x',
        plugins: { legend: { display: false } },
        onClick: (_, elements) => elements.length > 0 && onPick?.(elements[0].index),
      },
    });
    return () => chart.destroy();
  }, [labels.join('\u0000'), values.join(',')]);
  return html`<div class="chart"><canvas ref=${canvas} aria-label=${`${label} chart`}></canvas></div>`;
}

/** Rows as CSV (RFC 4180 quoting), columns from the union of their fields; nested values as JSON. */
export function toCsv(rows) {
  const fields = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cell = (value) => {
    const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [fields.map(cell).join(','), ...rows.map((row) => fields.map((field) => cell(row[field])).join(','))].join('\r\n') + '\r\n';
}

/** Saves text as a file through a temporary link. */
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export const formatTime = (value) => {
  if (value === null || value === undefined || value === '') return '';
  const date = new Date(typeof value === 'number' ? value : /[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString().replace('T', ' ').slice(0, 19);
};

export const tagsText = (tags) => Object.entries(tags ?? {}).map(([key, value]) => `${key}=${value}`).join(', ');

export function Severity({ score, severity }) {
  return html`<span class=${`severity ${severity}`}>${score ?? '–'} ${severity}</span>`;
}

/** A link inside the console (hash routes). */
export const href = (path, params) => `#${path}${params ? `?${new URLSearchParams(params)}` : ''}`;
