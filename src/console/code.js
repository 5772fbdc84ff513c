// Code: the code inventory of a JAR or a package, with first and last seen, to find code not seen for N days.
import { readAllPages, runReport } from './api.js';
import { Downloads } from './reports.js';
import { Empty, ErrorBox, href, html, isPartial, Progress, ReportState, Table, useDraft, useLoad } from './ui.js';

const LEVELS = { methods: [], classes: ['sourceName', 'className'], jars: ['sourceName'] };
const DAY = 86_400_000;

/** A code report time (UTC, no zone) in epoch ms. */
const epoch = (time) => Date.parse(`${time}Z`);

export function CodePage({ canWrite, params }) {
  const source = params.get('source') ?? '';
  const pkg = params.get('package') ?? '';
  const level = params.get('level') ?? 'classes';
  const days = Number(params.get('days') ?? '0');
  const [draft, setDraft] = useDraft({ source, pkg, level, days: String(days) });
  const submit = (e) => {
    e.preventDefault();
    const next = { source: draft.source.trim(), package: draft.pkg.trim().replace(/\./g, '/'), level: draft.level, days: draft.days };
    location.hash = href('/code', Object.fromEntries(Object.entries(next).filter(([, v]) => v && v !== '0')));
  };
  const state = useLoad(async (progress, signal) => {
    if (!source && !pkg) return null;
    if (!canWrite) throw Object.assign(new Error('The code inventory takes a new code report, which needs a key with the write scope.'), { status: 0 });
    const filter = [...(source ? [`sourceName:${source}`] : []), ...(pkg ? [`className:${pkg}`] : [])];
    // A year back, so code last seen long ago is still listed.
    const first = await runReport('code', { filter, groupBy: LEVELS[level] ?? [], from: '365d' }, { onProgress: progress, signal });
    const pages = first.totalPages > 1 ? await readAllPages('code', first.reportId) : [first];
    return { report: first, items: pages.flatMap((page) => page.data) };
  }, [source, pkg, level, canWrite]);
  const cutoff = Date.now() - days * DAY;
  const rows = state.data === null || state.data === undefined ? [] : days > 0 ? state.data.items.filter((item) => epoch(item.lastSeen) < cutoff) : state.data.items;
  return html`<div>
    <div class="toolbar">
      <h1>Code</h1>
      <form class="inline" onSubmit=${submit}>
        <label>JAR <input aria-label="JAR" placeholder="log4j-core-2.14.1.jar" value=${draft.source} onInput=${(e) => setDraft({ ...draft, source: e.target.value })} /></label>
        <label>Package <input aria-label="package" placeholder="com/acme/" value=${draft.pkg} onInput=${(e) => setDraft({ ...draft, pkg: e.target.value })} /></label>
        <label>Level <select aria-label="level" value=${draft.level} onChange=${(e) => setDraft({ ...draft, level: e.target.value })}>
          <option value="jars">JARs</option><option value="classes">classes</option><option value="methods">methods</option>
        </select></label>
        <label>Not seen for <input aria-label="days" type="number" min="0" value=${draft.days} onInput=${(e) => setDraft({ ...draft, days: e.target.value })} /> days</label>
        <button type="submit">Show</button>
      </form>
    </div>
    ${!source && !pkg ? html`<${Empty}>Name a JAR (its file name, or part of it) or a package (com/acme/ or com.acme.) to list its code with when it was first and last seen. With “not seen for N days” only code idle that long stays: candidates for dead code.<//>`
      : state.loading ? html`<${Progress} label="Reading the code inventory" elapsedMs=${state.elapsedMs} />`
      : state.error ? html`<${ErrorBox} error=${state.error} />`
      : html`<${ReportState} report=${state.data.report} />${state.data.report.state === 'FAILED' ? null : html`
        <p class="note">${rows.length.toLocaleString()} of ${state.data.items.length.toLocaleString()} ${level}${days > 0 ? ` not seen for ${days} days` : ''}${isPartial(state.data.report) ? ' (partial)' : ''}; times UTC. All ${level} of report ${state.data.report.reportId.slice(0, 8)}: <${Downloads} family="code" report=${state.data.report} /></p>
        ${rows.length === 0 ? html`<${Empty}>Nothing here${days > 0 ? ' idle that long' : ''}.<//>` : html`<${Table} testId="code-list" rows=${rows} columns=${[
          ['JAR', (item) => item.sourceName],
          ...(level !== 'jars' ? [['Class', (item) => item.className]] : []),
          ...(level === 'methods' ? [['Method', (item) => item.methodName]] : []),
          ...(level !== 'methods' ? [['Methods', (item) => item.count.toLocaleString()]] : []),
          ['First seen', (item) => item.firstSeen.replace('T', ' ')],
          ['Last seen', (item) => item.lastSeen.replace('T', ' ')],
        ]} />`}`}`}
  </div>`;
}
