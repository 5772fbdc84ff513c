// Instance: one VM's inventory, tags (edited with a write key), annotations, components and CVEs.
import { useState } from 'preact/hooks';
import { api, query } from './api.js';
import { Empty, ErrorBox, formatTime, href, html, Progress, Table, useLoad } from './ui.js';

const path = (vmId) => `/public/instance/${encodeURIComponent(vmId)}`;

/** Every component of the VM with its CVEs: the CVE events with showNotImpacted, page by page. */
async function componentsOf(vmId) {
  const items = [];
  let afterToken = '';
  do {
    const page = await api(`/public/cve/events${query({ vmId, showNotImpacted: 'true', limit: 1000, afterToken })}`);
    items.push(...page.data);
    afterToken = page.hasNext ? page.afterToken : '';
  } while (afterToken !== '');
  return items;
}

function Tags({ vmId, tags, canWrite, onChange }) {
  const [draft, setDraft] = useState({ key: '', value: '' });
  const [error, setError] = useState(null);
  /** Whether the change was made; a refused one keeps the form as typed, to be corrected. */
  const act = async (request) => {
    setError(null);
    try {
      await request();
      onChange();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    }
  };
  const add = async (e) => {
    e.preventDefault();
    if (await act(() => api(`${path(vmId)}/tags`, { method: 'POST', body: { key: draft.key.trim(), value: draft.value.trim() } }))) setDraft({ key: '', value: '' });
  };
  return html`<section class="card">
    <h2>Tags</h2>
    ${tags.length === 0 ? html`<p class="note">No tags.</p>` : html`<ul class="tags" data-testid="tags">${tags.map((tag) => html`<li><code>${tag.key}=${tag.value}</code>${canWrite ? html` <button class="link" aria-label=${`remove ${tag.key}`} onClick=${() => act(() => api(`${path(vmId)}/tags/${encodeURIComponent(tag.key)}`, { method: 'DELETE' }))}>remove</button>` : null}</li>`)}</ul>`}
    ${canWrite ? html`<form class="inline" onSubmit=${add}>
      <input aria-label="tag key" placeholder="key" value=${draft.key} onInput=${(e) => setDraft({ ...draft, key: e.target.value })} required />
      <input aria-label="tag value" placeholder="value" value=${draft.value} onInput=${(e) => setDraft({ ...draft, value: e.target.value })} />
      <button type="submit">Set tag</button>
    </form>` : html`<p class="note">Editing tags needs a key with the write scope.</p>`}
    <${ErrorBox} error=${error} title="The tag was not changed" />
  </section>`;
}

export function InstancePage({ vmId, canWrite }) {
  const [version, setVersion] = useState(0);
  const state = useLoad(async () => {
    const [vm, tags, annotations, components] = await Promise.all([api(path(vmId)), api(`${path(vmId)}/tags`), api(`${path(vmId)}/annotations`), componentsOf(vmId)]);
    return { vm, tags, annotations, components };
  }, [vmId, version]);
  if (state.loading && state.data === null) return html`<${Progress} label="Reading the VM" />`;
  if (state.error) return html`<h1>VM ${vmId}</h1><${ErrorBox} error=${state.error} />`;
  const { vm, tags, annotations, components } = state.data;
  const properties = vm.inventory?.systemProperties ?? {};
  const vulnerable = components.filter((item) => item.cveId !== null);
  const byComponent = new Map();
  for (const item of components) {
    const key = `${item.componentName} ${item.componentVersion}`;
    byComponent.set(key, [...(byComponent.get(key) ?? []), item]);
  }
  return html`<div>
    <h1>${vm.inventory?.hostName || vmId}</h1>
    <p class="note"><code data-testid="vm-id">${vm.vmId}</code> · <strong>${vm.state}</strong> · started ${formatTime(vm.startTime)} · last heard ${formatTime(vm.lastHeardTime)} UTC</p>
    <div class="grid">
      <section class="card">
        <h2>Inventory</h2>
        <dl>
          <dt>Main</dt><dd>${vm.inventory?.mainMethod ?? ''}</dd>
          <dt>Java</dt><dd>${properties['java.vm.vendor'] ?? ''} ${properties['java.runtime.version'] ?? properties['java.version'] ?? ''}</dd>
          <dt>OS</dt><dd>${properties['os.name'] ?? ''} ${properties['os.arch'] ?? ''}</dd>
          <dt>Agent</dt><dd>${vm.agentVersion} (${vm.agentRevision})</dd>
          <dt>Mailbox</dt><dd>${vm.mailbox ?? ''}</dd>
        </dl>
        <details><summary>System properties (${Object.keys(properties).length})</summary>
          <${Table} rows=${Object.entries(properties).sort()} columns=${[['Name', ([name]) => name], ['Value', ([, value]) => value]]} />
        </details>
      </section>
      <${Tags} vmId=${vmId} tags=${tags} canWrite=${canWrite} onChange=${() => setVersion(version + 1)} />
      <section class="card">
        <h2>Annotations</h2>
        ${annotations.length === 0 ? html`<p class="note">No annotations.</p>` : html`<${Table} rows=${annotations} columns=${[['Key', (a) => a.key], ['Value', (a) => a.value], ['Time', (a) => formatTime(a.time)]]} />`}
      </section>
    </div>
    <section class="card">
      <h2>CVEs (${vulnerable.length})</h2>
      ${vulnerable.length === 0 ? html`<p class="note">No known CVE in this VM's components.</p>` : html`<${Table} testId="vm-cves" rows=${vulnerable} columns=${[
        ['CVE', (item) => html`<a href=${href(`/cve/${encodeURIComponent(item.cveId)}`)}>${item.cveId}</a>`],
        ['Score', (item) => item.score ?? '–'],
        ['Component', (item) => `${item.componentName} ${item.componentVersion}`],
        ['State', (item) => html`<span class=${item.cveState === 'USED' ? 'used' : 'present'}>${item.cveState}</span>`],
      ]} />`}
    </section>
    <section class="card">
      <h2>Components (${byComponent.size})</h2>
      ${byComponent.size === 0 ? html`<${Empty}>The agent has not reported components for this VM.<//>` : html`<${Table} testId="vm-components" rows=${[...byComponent]} columns=${[
        ['Component', ([, items]) => items[0].componentName],
        ['Version', ([, items]) => items[0].componentVersion],
        ['CVEs', ([, items]) => items.filter((item) => item.cveId !== null).length || ''],
      ]} />`}
    </section>
  </div>`;
}
