// The public API as the console uses it: one fetch wrapper that turns every error body into an ApiError,
// and the report helpers (create, wait with progress, read every page). Nothing here touches the page.

/** An error answer of the API (`{error, message, details}`), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? [];
  }
}

/** The three report families: where a report is created and read. */
export const FAMILIES = {
  jvm: { label: 'JVM inventory', create: '/public/report/jvmInventory', base: '/public/report/jvmInventory' },
  code: { label: 'Code inventory', create: '/public/report/codeInventory', base: '/public/report/codeInventory' },
  component: { label: 'Component inventory', create: '/public/component/report/schedule', base: '/public/component/report' },
};

// The key lives in this tab's sessionStorage only: gone when the tab closes, never in a cookie or localStorage.
const KEY_SLOT = 'jvmlens.apiKey';
export const session = {
  key: () => sessionStorage.getItem(KEY_SLOT),
  keep: (key) => sessionStorage.setItem(KEY_SLOT, key),
  forget: () => sessionStorage.removeItem(KEY_SLOT),
};

/** The window event a 401 to the session's key raises, with the ApiError as its detail. */
export const UNAUTHORIZED = 'jvmlens:unauthorized';

/** Calls the API with the session's key (or `key`); the parsed JSON, null for 204, or an ApiError thrown. */
export async function api(path, { method = 'GET', body, key } = {}) {
  const headers = { 'x-api-key': key ?? session.key() ?? '' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `the service did not answer (${error.message})`);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: reported below with the status
  }
  if (!response.ok) {
    const error = json !== null && typeof json.error === 'string'
      ? new ApiError(response.status, json.error, json.message ?? json.error, json.details)
      : new ApiError(response.status, `HTTP_${response.status}`, text.slice(0, 200) || response.statusText);
    // The session's key stopped working (revoked): the console signs the user out with this error.
    if (response.status === 401 && key === undefined) dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: error }));
    throw error;
  }
  return json;
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The key's user and scopes (GET /public/me). While the service starts it answers 503 NOT_READY, as all of
 * /public does: asked again a second later (its Retry-After), `onStarting(message)` told each time.
 */
export async function whoAmI(key, onStarting) {
  for (;;) {
    try {
      return await api('/public/me', { key });
    } catch (error) {
      if (error.status !== 503) throw error;
      onStarting(error.message);
      await sleep(1000);
    }
  }
}

/**
 * Creates a report and waits for it to leave PROCESSING, calling onProgress(elapsedMs) while it runs;
 * its page 0. `signal.cancelled` stops the wait (the page moved on).
 */
export async function runReport(family, body, { onProgress, signal } = {}) {
  const created = await api(FAMILIES[family].create, { method: 'POST', body });
  return waitForReport(family, created.reportId, { onProgress, signal });
}

export async function waitForReport(family, reportId, { onProgress, signal } = {}) {
  const started = Date.now();
  for (;;) {
    const page = await api(`${FAMILIES[family].base}/${encodeURIComponent(reportId)}`);
    if (page.state !== 'PROCESSING' || signal?.cancelled) return page;
    const elapsed = Date.now() - started;
    onProgress?.(elapsed);
    // Most reports take well under a second: ask often at first, then less.
    await sleep(elapsed < 2000 ? 40 : 250);
  }
}

/** Every page of a finished report, following afterToken (or page numbers for component reports). */
export async function readAllPages(family, reportId, onPage) {
  const pages = [];
  let next = '';
  for (let index = 0; ; index++) {
    const page = await api(`${FAMILIES[family].base}/${encodeURIComponent(reportId)}${next}`);
    pages.push(page);
    onPage?.(index + 1, page.totalPages);
    if (page.afterToken !== undefined) next = query({ afterToken: page.afterToken });
    else if (index + 1 < page.totalPages) next = query({ page: index + 1 });
    else return pages;
  }
}

/** A component page's nested data flattened to its innermost items, each with the group values around it. */
export function flatten(data, outer = {}) {
  return data.flatMap((item) => {
    if (!Array.isArray(item.data)) return [{ ...outer, ...item }];
    const { data: inner, ...group } = item;
    return flatten(inner, { ...outer, ...group });
  });
}

/** A filter string literal: single quotes, a quote doubled. */
export const literal = (value) => `'${String(value).replace(/'/g, "''")}'`;
