// Reports: each family's reports with state and times; create one in the filter/groupBy/sortBy language
// (errors shown where the API points), wait with progress, download as JSON or CSV, delete.
import { useState } from 'preact/hooks';
import { api, FAMILIES, flatten, readAllPages, waitForReport } from './api.js';
import { download, Empty, ErrorBox, formatTime, href, html, Progress, Table, toCsv, useLoad } from './ui.js';

/** The time fields each family's POST takes. */
const WINDOW = { jvm: ['from', 'to'], code: ['from', 'to'], component: ['startTime', 'endTime'] };

const splitList = (text) => text.split(',').map((part) => part.trim()).filter(Boolean);

/** Every item of a finished report, component items flattened with their group values. */
async function allItems(family, reportId, onPage) {
  const pages = await readAllPages(family, reportId, onPage);
  return pages.flatMap((page) => (family === 'component' ? flatten(page.data) : page.data));
}

function CreateForm({ family, onCreated }) {
  const [form, setForm] = useState({ reportName: '', filter: '', groupBy: '', sortBy: '', start: '', end: '' });
  const [error, setError] = useState(null);
  const [waiting, setWaiting] = useState(null);
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const [startField, endField] = WINDOW[family];
    const body = {
      filter: form.filter.split('\n').map((line) => line.trim()).filter(Boolean),
      groupBy: splitList(form.groupBy),
      sortBy: splitList(form.sortBy),
      ...(form.reportName.trim() ? { reportName: form.reportName.trim() } : {}),
      ...(form.start.trim() ? { [startField]: /^\d+$/.test(form.start.trim()) ? Number(form.start.trim()) : form.start.trim() } : {}),
      ...(form.end.trim() ? { [endField]: /^\d+$/.test(form.end.trim()) ? Number(form.end.trim()) : form.end.trim() } : {}),
    };
    try {
      const created = await api(FAMILIES[family].create, { method: 'POST', body });
      setWaiting({ reportId: created.reportId, elapsedMs: 0 });
      const final = await waitForReport(family, created.reportId, { onProgress: (elapsedMs) => setWaiting({ reportId: created.reportId, elapsedMs }) });
      setWaiting(null);
      onCreated(final);
    } catch (failure) {
      setWaiting(null);
      setError(failure);
    }
  };
  const [startField, endField] = WINDOW[family];
  return html`<form class="card create" onSubmit=${submit} data-testid="create-report">
    <h2>New ${FAMILIES[family].label} report</h2>
    <label>Name <input aria-label="report name" value=${form.reportName} onInput=${set('reportName')} /></label>
    <label>Filter, one entry per line <textarea aria-label="filter" rows="3" placeholder=${family === 'code' ? 'sourceName:log4j-core' : "tags.env = 'prod'"} value=${form.filter} onInput=${set('filter')}></textarea></label>
    <label>groupBy <input aria-label="groupBy" placeholder=${family === 'code' ? 'sourceName, className' : 'tags.env'} value=${form.groupBy} onInput=${set('groupBy')} /></label>
    <label>sortBy <input aria-label="sortBy" placeholder="count=DESC" value=${form.sortBy} onInput=${set('sortBy')} /></label>
    <label>${startField} <input aria-label=${startField} placeholder=${family === 'component' ? '3m' : '30d'} value=${form.start} onInput=${set('start')} /></label>
    <label>${endField} <input aria-label=${endField} placeholder="now" value=${form.end} onInput=${set('end')} /></label>
    <button type="submit" disabled=${waiting !== null}>Create</button>
    ${waiting ? html`<${Progress} label=${`Report ${waiting.reportId.slice(0, 8)} is PROCESSING`} elapsedMs=${waiting.elapsedMs} />` : null}
    <${ErrorBox} error=${error} title="The report was not created" />
  </form>`;
}

/** JSON and CSV downloads of every item of a finished report. */
export function Downloads({ family, report }) {
  const [busy, setBusy] = useState(null);
  const [error, setError] = useState(null);
  const save = async (format) => {
    setError(null);
    try {
      setBusy('reading pages');
      const items = await allItems(family, report.reportId, (read, total) => setBusy(`page ${read} of ${total}`));
      const name = `${family}-${report.reportId}`;
      if (format === 'json') download(`${name}.json`, JSON.stringify(items, null, 1), 'application/json');
      else download(`${name}.csv`, toCsv(items), 'text/csv');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(null);
    }
  };
  const finished = report.state !== 'PROCESSING';
  return html`<span class="actions">
    <button class="link" disabled=${!finished || busy !== null} onClick=${() => save('json')}>JSON</button>
    <button class="link" disabled=${!finished || busy !== null} onClick=${() => save('csv')}>CSV</button>
    ${busy ? html`<span class="note"> ${busy}…</span>` : null}
    <${ErrorBox} error=${error} title="The download failed" />
  </span>`;
}

function Actions({ family, report, canWrite, onDeleted }) {
  const [error, setError] = useState(null);
  const remove = async () => {
    if (!confirm(`Delete report ${report.reportId}?`)) return;
    try {
      await api(`${FAMILIES[family].base}/${encodeURIComponent(report.reportId)}`, { method: 'DELETE' });
      onDeleted();
    } catch (failure) {
      setError(failure);
    }
  };
  return html`<span class="actions">
    <${Downloads} family=${family} report=${report} />
    ${canWrite ? html`<button class="link danger" onClick=${remove}>Delete</button>` : null}
    <${ErrorBox} error=${error} />
  </span>`;
}

export function ReportsPage({ canWrite, params }) {
  const family = FAMILIES[params.get('family')] ? params.get('family') : 'jvm';
  // Keyed by family: each tab starts with its own empty form, no error or result of another tab.
  return html`<${FamilyReports} key=${family} family=${family} canWrite=${canWrite} />`;
}

function FamilyReports({ family, canWrite }) {
  const [version, setVersion] = useState(0);
  const [latest, setLatest] = useState(null);
  const state = useLoad(() => api(`${FAMILIES[family].base}?limit=100`), [family, version]);
  const time = (value) => formatTime(value);
  return html`<div>
    <div class="toolbar">
      <h1>Reports</h1>
      <nav class="tabs">${Object.entries(FAMILIES).map(([name, { label }]) => html`<a class=${name === family ? 'active' : ''} href=${href('/reports', { family: name })}>${label}</a>`)}</nav>
    </div>
    ${canWrite ? html`<${CreateForm} family=${family} onCreated=${(report) => { setLatest(report); setVersion(version + 1); }} />` : html`<p class="note">Creating and deleting reports needs a key with the write scope; this key can read and download them.</p>`}
    ${latest ? html`<p class="done" data-testid="report-done">Report ${latest.reportId.slice(0, 8)}: ${latest.state}, ${latest.totalCount?.toLocaleString() ?? 0} items. ${(latest.stateMessages ?? []).join('; ')}</p>` : null}
    ${state.loading ? html`<${Progress} label="Listing reports" />` : state.error ? html`<${ErrorBox} error=${state.error} />` : state.data.data.length === 0 ? html`<${Empty}>No ${FAMILIES[family].label} report yet.<//>` : html`
      <${Table} testId="report-list" rows=${state.data.data} columns=${[
        ['Report', (report) => html`<code title=${report.reportId}>${report.reportId.slice(0, 8)}</code> ${report.reportName ?? ''}`],
        ['State', (report) => html`<span class=${`state ${report.state}`}>${report.state}</span>`],
        ['Parameters', (report) => html`<code>${JSON.stringify(report.params ?? report.parameters ?? {})}</code>`],
        ['Requested', (report) => time(report.requestTime ?? report.created)],
        ['Finished', (report) => time(report.finishTime ?? report.generated)],
        ['', (report) => html`<${Actions} family=${family} report=${report} canWrite=${canWrite} onDeleted=${() => setVersion(version + 1)} />`],
      ]} />`}
  </div>`;
}
