// Vulnerabilities: every CVE of the fleet (or of the VMs with a tag) with its score and how many VMs loaded
// its code (USED) or only carry it (PRESENT); a CVE's page lists its VMs, page by page.
import { useState } from 'preact/hooks';
import { api, query } from './api.js';
import { ConnectHint, Empty, ErrorBox, formatTime, href, html, Progress, Severity, Table, tagsText, useDraft, useLoad } from './ui.js';

/** `env=prod` as the query parameters of a tag filter ({'tags.env': 'prod'}), {} when empty; a malformed one is refused. */
function tagParameter(tag) {
  if (!tag) return {};
  const at = tag.indexOf('=');
  const [key, value] = [tag.slice(0, at).trim(), tag.slice(at + 1).trim()];
  // The API would ignore a filter without a key and a value, and answer for the whole fleet.
  if (at < 0 || key === '' || value === '') throw Object.assign(new Error(`“${tag}” is not a tag filter: write key=value, such as env=prod.`), { status: 0 });
  return { [`tags.${key}`]: value };
}

function TagFilter({ tag, onChange }) {
  const [draft, setDraft] = useDraft(tag);
  return html`<form class="inline" onSubmit=${(e) => { e.preventDefault(); onChange(draft.trim()); }}>
    <label>Tag <input aria-label="tag filter" placeholder="env=prod" value=${draft} onInput=${(e) => setDraft(e.target.value)} /></label>
    <button type="submit">Filter</button>
    ${tag ? html`<button type="button" class="link" onClick=${() => { setDraft(''); onChange(''); }}>clear</button>` : null}
  </form>`;
}

export function VulnerabilitiesPage({ params }) {
  const tag = params.get('tag') ?? '';
  const sort = params.get('sort') ?? 'score';
  const go = (changes) => (location.hash = href('/cves', Object.fromEntries(Object.entries({ tag, sort, ...changes }).filter(([, v]) => v))));
  const state = useLoad(async () => api(`/public/cve/summary${query(tagParameter(tag))}`), [tag]);
  const toolbar = html`<div class="toolbar">
    <h1>Vulnerabilities</h1>
    <${TagFilter} tag=${tag} onChange=${(value) => go({ tag: value })} />
    <label>Sort <select aria-label="sort" value=${sort} onChange=${(e) => go({ sort: e.target.value })}>
      <option value="score">by score</option><option value="used">by VMs using it</option>
    </select></label>
  </div>`;
  if (state.loading) return html`<div>${toolbar}<${Progress} label="Reading the fleet's CVEs" /></div>`;
  if (state.error) return html`<div>${toolbar}<${ErrorBox} error=${state.error} title="The CVEs could not be listed" /></div>`;
  const { data, summary } = state.data;
  const rows = sort === 'used' ? [...data].sort((a, b) => b.usedVmCount - a.usedVmCount || (b.score ?? -1) - (a.score ?? -1)) : data;
  const used = data.filter((cve) => cve.usedVmCount > 0).length;
  return html`<div>
    ${toolbar}
    <p class="note" data-testid="cve-summary">${data.length} CVEs in ${summary.vmCount.toLocaleString()} VMs${tag ? ` with ${tag}` : ''}; ${used} with code loaded (USED) in at least one VM.</p>
    ${summary.vmCount === 0 ? (tag ? html`<${Empty}>No VM has the tag ${tag}.<//>` : html`<${ConnectHint} />`) : data.length === 0 ? html`<${Empty}>No known CVE in these VMs. Import advisories with <code>jvmlens cve import</code> to check against more.<//>` : html`
      <${Table} testId="cve-list" rows=${rows} onRow=${(cve) => (location.hash = href(`/cve/${encodeURIComponent(cve.cveId)}`, tag ? { tag } : undefined))} columns=${[
        ['CVE', (cve) => html`<a href=${href(`/cve/${encodeURIComponent(cve.cveId)}`, tag ? { tag } : undefined)}>${cve.cveId}</a>`],
        ['Severity', (cve) => html`<${Severity} score=${cve.score} severity=${cve.severity} />`],
        ['USED in VMs', (cve) => html`<span class=${cve.usedVmCount > 0 ? 'used' : ''}>${cve.usedVmCount.toLocaleString()}</span>`],
        ['PRESENT only', (cve) => cve.presentVmCount.toLocaleString()],
        ['Components', (cve) => cve.components.map((c) => `${c.componentName} ${c.componentVersion}`).join(', ')],
      ]} />`}
  </div>`;
}

export function CvePage({ cveId, params }) {
  const tag = params.get('tag') ?? '';
  // The afterTokens of the pages before this one, so Previous goes back.
  const [tokens, setTokens] = useState([]);
  const token = tokens[tokens.length - 1] ?? '';
  const state = useLoad(async () => {
    const [page, summary] = await Promise.all([api(`/public/cve/events${query({ cveId, afterToken: token, limit: 100, ...tagParameter(tag) })}`), api(`/public/cve/summary${query(tagParameter(tag))}`)]);
    return { page, cve: summary.data.find((item) => item.cveId === cveId) };
  }, [cveId, tag, token]);
  const header = html`<h1>${cveId}</h1><p><a href=${href('/cves', tag ? { tag } : undefined)}>← all vulnerabilities</a>${tag ? ` · VMs with ${tag}` : ''}</p>`;
  if (state.loading) return html`${header}<${Progress} label="Finding its VMs" />`;
  if (state.error) return html`${header}<${ErrorBox} error=${state.error} />`;
  const { page, cve } = state.data;
  return html`<div>
    ${header}
    ${cve ? html`<p class="big" data-testid="cve-counts"><${Severity} score=${cve.score} severity=${cve.severity} /> · USED in ${cve.usedVmCount.toLocaleString()} VMs · PRESENT only in ${cve.presentVmCount.toLocaleString()}</p>` : null}
    ${page.data.length === 0 ? html`<${Empty}>No VM carries ${cveId}${tag ? ` among those with ${tag}` : ''}.<//>` : html`
      <${Table} testId="cve-vms" rows=${page.data} onRow=${(item) => (location.hash = `#/instance/${encodeURIComponent(item.vmId)}`)} columns=${[
        ['Host', (item) => item.hostName],
        ['vmId', (item) => html`<a class="id" href=${`#/instance/${encodeURIComponent(item.vmId)}`}>${item.vmId}</a>`],
        ['Tags', (item) => tagsText(item.tags)],
        ['Component', (item) => `${item.componentName} ${item.componentVersion}`],
        ['State', (item) => html`<span class=${item.cveState === 'USED' ? 'used' : 'present'}>${item.cveState}</span>`],
        ['Last heard', (item) => formatTime(item.lastHeardTime)],
      ]} />`}
    <div class="pager">
      <button disabled=${tokens.length === 0} onClick=${() => setTokens(tokens.slice(0, -1))}>Previous</button>
      <span>page ${tokens.length + 1}</span>
      <button disabled=${!page.hasNext} onClick=${() => setTokens([...tokens, page.afterToken])}>Next</button>
    </div>
  </div>`;
}

