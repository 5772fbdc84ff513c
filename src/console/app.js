// The console's shell: sign-in with an API key, the navigation, and the hash routes to each page.
import { render } from 'preact';
import { useEffect, useErrorBoundary, useState } from 'preact/hooks';
import { session, UNAUTHORIZED, whoAmI } from './api.js';
import { CodePage } from './code.js';
import { ComponentsPage } from './components.js';
import { FleetPage, VmListPage } from './fleet.js';
import { InstancePage } from './instance.js';
import { ReportsPage } from './reports.js';
import { ErrorBox, html } from './ui.js';
import { CvePage, VulnerabilitiesPage } from './vulnerabilities.js';

const PAGES = [
  ['fleet', 'Fleet'],
  ['cves', 'Vulnerabilities'],
  ['components', 'Components'],
  ['code', 'Code'],
  ['reports', 'Reports'],
];

/** The current hash route: its path segments and query parameters. */
function readRoute() {
  const [path, search = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(search) };
}

function SignIn({ onSignedIn, signedOut }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [starting, setStarting] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await whoAmI(key.trim(), setStarting);
      session.keep(key.trim());
      onSignedIn(me);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
      setStarting(null);
    }
  };
  return html`<main class="signin">
    <h1>jvmlens</h1>
    <p>Where your JVMs run, what they load, and which of their components are vulnerable.</p>
    <form onSubmit=${submit}>
      <label for="key">API key</label>
      <input id="key" name="key" type="password" autocomplete="off" value=${key} onInput=${(e) => setKey(e.target.value)} placeholder="jvl_…" required />
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    ${starting === null ? null : html`<${Starting} message=${starting} />`}
    <p class="note">The key is kept in this tab only, until it closes. A key with the <code>read</code> scope sees everything; creating reports and editing tags needs <code>write</code>.</p>
    <${ErrorBox} error=${error ?? signedOut} title=${error ? 'Sign-in failed' : 'You were signed out'} />
  </main>`;
}

/** A fault in a page's own code shows as an error with a way back, never as a blank page. */
function Guard({ children, page }) {
  const [error, reset] = useErrorBoundary();
  useEffect(() => reset(), [page]);
  if (error) return html`<${ErrorBox} error=${{ status: 0, message: String(error.message ?? error) }} title="This page failed in the browser" /><p><a href="#/fleet" onClick=${() => reset()}>Back to the fleet</a></p>`;
  return children;
}

function Shell({ me, onSignOut }) {
  const [route, setRoute] = useState(readRoute());
  useEffect(() => {
    const onChange = () => setRoute(readRoute());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  const [page = 'fleet', id] = route.parts;
  const canWrite = me.scopes.includes('write');
  const [vmId, setVmId] = useState('');
  const content = {
    fleet: () => html`<${FleetPage} canWrite=${canWrite} params=${route.params} />`,
    vms: () => html`<${VmListPage} canWrite=${canWrite} params=${route.params} />`,
    cves: () => html`<${VulnerabilitiesPage} params=${route.params} />`,
    cve: () => html`<${CvePage} cveId=${id} params=${route.params} />`,
    components: () => html`<${ComponentsPage} canWrite=${canWrite} params=${route.params} />`,
    code: () => html`<${CodePage} canWrite=${canWrite} params=${route.params} />`,
    reports: () => html`<${ReportsPage} canWrite=${canWrite} params=${route.params} />`,
    instance: () => html`<${InstancePage} vmId=${id} canWrite=${canWrite} />`,
  }[page];
  return html`<div class="shell">
    <header>
      <a class="brand" href="#/fleet">jvmlens</a>
      <nav>${PAGES.map(([name, label]) => html`<a href=${`#/${name}`} class=${page === name || (page === 'cve' && name === 'cves') || (page === 'vms' && name === 'fleet') ? 'active' : ''}>${label}</a>`)}</nav>
      <form class="goto" onSubmit=${(e) => { e.preventDefault(); if (vmId.trim()) location.hash = `#/instance/${encodeURIComponent(vmId.trim())}`; }}>
        <input aria-label="vmId" placeholder="Go to vmId…" value=${vmId} onInput=${(e) => setVmId(e.target.value)} />
      </form>
      <span class="user" title=${`scopes: ${me.scopes.join(', ')}`}>${me.userId}${canWrite ? '' : ' (read-only)'}</span>
      <button class="link" onClick=${onSignOut}>Sign out</button>
    </header>
    <main><${Guard} page=${location.hash}>${content ? content() : html`<p>No page “${page}”. <a href="#/fleet">Go to the fleet</a>.</p>`}<//></main>
  </div>`;
}

/** The service is up but not ready yet (a start, a restart): sign-in waits for it rather than failing. */
function Starting({ message }) {
  return html`<p class="loading" data-testid="starting">The service is starting (${message}); signing in as soon as it is ready…</p>`;
}

function App() {
  const [me, setMe] = useState(null);
  const [checking, setChecking] = useState(session.key() !== null);
  // Why the session ended (the API refused its key), shown at sign-in.
  const [signedOut, setSignedOut] = useState(null);
  useEffect(() => {
    const onUnauthorized = (event) => {
      session.forget();
      setMe(null);
      setSignedOut(event.detail);
    };
    addEventListener(UNAUTHORIZED, onUnauthorized);
    return () => removeEventListener(UNAUTHORIZED, onUnauthorized);
  }, []);
  const [starting, setStarting] = useState(null);
  useEffect(() => {
    if (session.key() === null) return;
    // A key kept by this tab (a reload): still valid? A service still starting says nothing about the key.
    whoAmI(undefined, setStarting).then(setMe, () => session.forget()).finally(() => setChecking(false));
  }, []);
  if (checking) return starting === null ? html`<p class="loading">Checking the key…</p>` : html`<${Starting} message=${starting} />`;
  if (me === null) return html`<${SignIn} onSignedIn=${(signedIn) => { setSignedOut(null); setMe(signedIn); }} signedOut=${signedOut} />`;
  const signOut = () => {
    session.forget();
    setMe(null);
    location.hash = '';
  };
  return html`<${Shell} me=${me} onSignOut=${signOut} />`;
}

const root = document.getElementById('app');
// The static "Loading" line is replaced, not kept above the console.
root.textContent = '';
render(html`<${App} />`, root);
