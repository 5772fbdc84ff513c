// Fleet: VM counts by state, Java version and vendor, agent version and a tag key the user picks, from JVM
// inventory reports, as charts and tables; a group's VMs on their own page.
import { useState } from 'preact/hooks';
import { api, FAMILIES, literal, readAllPages, runReport, waitForReport } from './api.js';
import { Downloads } from './reports.js';
import { BarChart, ConnectHint, Empty, ErrorBox, formatTime, html, isPartial, Progress, ReportState, Table, tagsText, useLoad } from './ui.js';

const NONE = '(none)';

function charts(tagKey) {
  return [
    { title: 'State', groupBy: ['state'] },
    { title: 'Java vendor and version', groupBy: ['javaVendor', 'javaVersion'] },
    { title: 'Agent version', groupBy: ['agentVersion'] },
    { title: `Tag “${tagKey}”`, groupBy: [`tags.${tagKey}`] },
  ];
}

/** The filter entries that select one group of a grouped JVM report. */
function groupFilter(groupBy, item) {
  return groupBy.map((field) => (item[field] === null || item[field] === undefined ? `${field} = null` : `${field} = ${literal(item[field])}`));
}

/** A link to the VMs a filter selects. */
export function vmsHref(filter, title) {
  const params = new URLSearchParams();
  for (const entry of filter) params.append('filter', entry);
  params.set('title', title);
  return `#/vms?${params}`;
}

/** Every grouping field of the page: one report groups by all of them, and each chart sums its own out of it. */
const allFields = (list) => [...new Set(list.flatMap((chart) => chart.groupBy))];

/**
 * The fleet grouped by every field of the page at once (one pass over the VMs instead of one per chart), fresh
 * with a write key; with a read-only key (which cannot create reports) the newest finished one of the same
 * grouping, or null.
 */
async function fleetGroups(groupBy, canWrite, progress, signal) {
  if (canWrite) {
    const first = await runReport('jvm', { groupBy }, { onProgress: progress, signal });
    const pages = first.totalPages > 1 ? await readAllPages('jvm', first.reportId) : [first];
    return { report: first, items: pages.flatMap((page) => page.data) };
  }
  const list = await api(`${FAMILIES.jvm.base}?state=SUCCEEDED&limit=1000`);
  const match = list.data.find((report) => JSON.stringify(report.params?.groupBy ?? []) === JSON.stringify(groupBy) && (report.params?.filter ?? []).length === 0);
  if (match === undefined) return null;
  const pages = await readAllPages('jvm', match.reportId);
  return { report: await waitForReport('jvm', match.reportId), items: pages.flatMap((page) => page.data) };
}

/** A chart's groups: the fleet's groups summed over the fields the chart does not show. */
function sumBy(items, groupBy) {
  const groups = new Map();
  for (const item of items) {
    const key = JSON.stringify(groupBy.map((field) => item[field] ?? null));
    const group = groups.get(key) ?? { ...Object.fromEntries(groupBy.map((field) => [field, item[field] ?? null])), count: 0 };
    group.count += item.count;
    groups.set(key, group);
  }
  return [...groups.values()];
}

function GroupChart({ chart, fleet }) {
  const items = sumBy(fleet.items, chart.groupBy);
  const label = (item) => chart.groupBy.map((field) => item[field] ?? NONE).join(' ');
  const sorted = [...items].sort((a, b) => b.count - a.count);
  const open = (item) => (location.hash = vmsHref(groupFilter(chart.groupBy, item), `${chart.title}: ${label(item)}`));
  return html`<section class="card" data-testid=${`chart-${chart.groupBy.join('-')}`}>
    <h2>${chart.title}</h2>
    ${sorted.length === 0 ? html`<${Empty}>No VMs.<//>` : html`
      <${BarChart} labels=${sorted.map(label)} values=${sorted.map((item) => item.count)} onPick=${(index) => open(sorted[index])} />
      <${Table} columns=${[[chart.title, label], ['VMs', (item) => item.count.toLocaleString()]]} rows=${sorted} limit=${50} onRow=${open} more=${html`<${Downloads} family="jvm" report=${fleet.report} />`} />`}
  </section>`;
}

export function FleetPage({ canWrite, params }) {
  const [tagKey, setTagKey] = useState(params.get('tag') ?? 'env');
  const [draft, setDraft] = useState(tagKey);
  const list = charts(tagKey);
  const state = useLoad((progress, signal) => fleetGroups(allFields(list), canWrite, progress, signal), [tagKey, canWrite]);
  const fleet = state.data;
  const failed = fleet !== null && fleet.report.state === 'FAILED';
  const total = fleet === null || failed ? null : fleet.items.reduce((sum, item) => sum + item.count, 0);
  // The form stays above a loading or failed count, so a bad tag key is corrected in place.
  return html`<div>
    <div class="toolbar">
      <h1>Fleet</h1>
      ${total !== null ? html`<span class="big" data-testid="vm-total">${total.toLocaleString()} VMs${isPartial(fleet.report) ? ' (partial)' : ''}</span>` : null}
      <form onSubmit=${(e) => { e.preventDefault(); setTagKey(draft.trim() || 'env'); }}>
        <label>Tag key <input value=${draft} onInput=${(e) => setDraft(e.target.value)} aria-label="tag key" /></label>
        <button type="submit">Group</button>
      </form>
    </div>
    ${state.loading ? html`<${Progress} label="Counting the fleet" elapsedMs=${state.elapsedMs} />` : null}
    <${ErrorBox} error=${state.error} title="The fleet could not be counted" />
    ${fleet !== null ? html`<p class="note">VMs alive in the last 30 days, from JVM report ${fleet.report.reportId.slice(0, 8)} of ${formatTime(fleet.report.finishTime)} UTC. Click a group for its VMs.</p><${ReportState} report=${fleet.report} />` : null}
    ${state.loading || state.error ? null
      : fleet === null ? html`<${Empty}>No finished JVM report of this page's grouping yet, and a read-only key cannot create one: ask someone with a <code>write</code> key to open this page once.<//>`
      : failed ? null
      : total === 0 ? html`<${ConnectHint} />`
      : html`<div class="grid">${list.map((chart) => html`<${GroupChart} chart=${chart} fleet=${fleet} />`)}</div>`}
  </div>`;
}

export function VmListPage({ canWrite, params }) {
  const filter = params.getAll('filter');
  const title = params.get('title') ?? 'VMs';
  const [token, setToken] = useState(null);
  const state = useLoad(async (progress, signal) => {
    if (!canWrite) throw Object.assign(new Error('Listing VMs takes a new JVM report, which needs a key with the write scope. Open a VM by its vmId above, or see the Reports page.'), { status: 0 });
    const report = token === null ? await runReport('jvm', { filter }, { onProgress: progress, signal }) : await api(`${FAMILIES.jvm.base}/${encodeURIComponent(token.reportId)}?afterToken=${encodeURIComponent(token.afterToken)}`);
    return report;
  }, [filter.join('\n'), token?.afterToken ?? '']);
  if (state.loading) return html`<${Progress} label="Listing the VMs" elapsedMs=${state.elapsedMs} />`;
  if (state.error) return html`<${ErrorBox} error=${state.error} title="Cannot list the VMs" />`;
  const report = state.data;
  return html`<div>
    <h1>${title}</h1>
    <p class="note">Filter: <code>${filter.join(' AND ') || 'none'}</code>${report.state === 'FAILED' ? null : ` · ${report.totalCount.toLocaleString()} VMs · page ${report.page + 1} of ${report.totalPages}`}</p>
    <${ReportState} report=${report} />
    ${report.state === 'FAILED' ? null : report.data.length === 0 ? html`<${Empty}>No VM matches.<//>` : html`<${Table} testId="vm-list" rows=${report.data} onRow=${(vm) => (location.hash = `#/instance/${encodeURIComponent(vm.vmId)}`)} columns=${[
      ['vmId', (vm) => html`<a class="id" href=${`#/instance/${encodeURIComponent(vm.vmId)}`}>${vm.vmId}</a>`],
      ['Host', (vm) => vm.hostName],
      ['State', (vm) => vm.state],
      ['Java', (vm) => `${vm.javaVendor ?? ''} ${vm.javaVersion ?? ''}`],
      ['Agent', (vm) => vm.agentVersion],
      ['Tags', (vm) => tagsText(vm.tags)],
      ['Last heard', (vm) => formatTime(vm.lastHeardTime)],
    ]} />`}
    ${report.afterToken ? html`<button onClick=${() => setToken({ reportId: report.reportId, afterToken: report.afterToken })}>Next page</button>` : null}
  </div>`;
}
