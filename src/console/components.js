// Components: search by name, versions and VM counts grouped by a tag, and which versions have CVEs.
import { api, flatten, literal, readAllPages, runReport } from './api.js';
import { Downloads } from './reports.js';
import { Empty, ErrorBox, href, html, Progress, ReportState, Table, useDraft, useLoad } from './ui.js';

export function ComponentsPage({ canWrite, params }) {
  const name = params.get('name') ?? '';
  const tagKey = params.get('groupBy') ?? '';
  const [draft, setDraft] = useDraft({ name, tagKey });
  const search = (e) => {
    e.preventDefault();
    location.hash = href('/components', Object.fromEntries(Object.entries({ name: draft.name.trim(), groupBy: draft.tagKey.trim() }).filter(([, v]) => v)));
  };
  const groupBy = tagKey ? [`tags.${tagKey}`] : [];
  const state = useLoad(async (progress, signal) => {
    if (!name) return null;
    if (!canWrite) throw Object.assign(new Error('Searching components takes a new component report, which needs a key with the write scope.'), { status: 0 });
    const [first, cves] = await Promise.all([runReport('component', { filter: [`componentName CONTAINS ${literal(name)}`], groupBy }, { onProgress: progress, signal }), api('/public/cve/summary')]);
    const pages = first.totalPages > 1 ? await readAllPages('component', first.reportId) : [first];
    // Which (name, version) pairs carry which CVEs, from the fleet's CVE list.
    const vulnerable = new Map();
    for (const cve of cves.data) {
      for (const component of cve.components) {
        const key = `${component.componentName}\u0000${component.componentVersion}`;
        vulnerable.set(key, [...(vulnerable.get(key) ?? []), cve]);
      }
    }
    const items = pages.flatMap((page) => flatten(page.data)).map((item) => ({ ...item, cves: vulnerable.get(`${item.componentName}\u0000${item.componentVersion}`) ?? [] }));
    return { report: first, items };
  }, [name, tagKey, canWrite]);
  return html`<div>
    <div class="toolbar">
      <h1>Components</h1>
      <form class="inline" onSubmit=${search}>
        <label>Name contains <input aria-label="component name" placeholder="log4j" value=${draft.name} onInput=${(e) => setDraft({ ...draft, name: e.target.value })} /></label>
        <label>Group by tag <input aria-label="group by tag" placeholder="env" value=${draft.tagKey} onInput=${(e) => setDraft({ ...draft, tagKey: e.target.value })} /></label>
        <button type="submit">Search</button>
      </form>
    </div>
    ${!name ? html`<${Empty}>Type part of a component's name (log4j, spring-core, jackson) to see its versions, the VMs that carry each and their CVEs.<//>`
      : state.loading ? html`<${Progress} label="Searching the fleet's components" elapsedMs=${state.elapsedMs} />`
      : state.error ? html`<${ErrorBox} error=${state.error} />`
      : html`<${ReportState} report=${state.data.report} />${state.data.report.state === 'FAILED' ? null
      : state.data.items.length === 0 ? html`<${Empty}>No component whose name contains “${name}”.<//>`
      : html`<${Table} testId="component-list" rows=${state.data.items} more=${html`<${Downloads} family="component" report=${state.data.report} />`} columns=${[
          ...(tagKey ? [[`tags.${tagKey}`, (item) => item[`tags.${tagKey}`] ?? '(none)']] : []),
          ['Component', (item) => item.componentName],
          ['Version', (item) => item.componentVersion],
          ['VMs', (item) => item.count.toLocaleString()],
          ['CVEs', (item) => item.cves.length === 0 ? html`<span class="note">none known</span>` : item.cves.map((cve) => html`<a class=${`severity ${cve.severity}`} href=${href(`/cve/${encodeURIComponent(cve.cveId)}`)}>${cve.cveId} </a>`)],
        ]} />`}`}
  </div>`;
}
