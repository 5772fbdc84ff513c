// How a node or a command reaches NATS servers that ask for credentials or TLS: credentials are written in
// the URLs as NATS clients take them (nats://user:password@host:4222, or nats://token@host:4222), which the
// client library does not read from them itself; `tls://` URLs, or a private CA (--cluster-ca), require TLS.
import type { ConnectionOptions } from '@nats-io/transport-node';

type Access = Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token' | 'tls'>;

/** The connection options of `urls`: the servers without credentials, and the first URL's credentials apart. */
export function natsAccess(urls: readonly string[], caFile: string): Access {
  let credentials: Pick<Access, 'user' | 'pass' | 'token'> | null = null;
  let tlsScheme = false;
  const servers = urls.map((raw) => {
    const url = new URL(raw);
    if (url.username !== '' && credentials === null) {
      const name = decodeURIComponent(url.username);
      credentials = url.password === '' ? { token: name } : { user: name, pass: decodeURIComponent(url.password) };
    }
    tlsScheme ||= url.protocol === 'tls:';
    return withoutCredentials(url);
  });
  const tls = caFile !== '' ? { caFile } : tlsScheme ? {} : undefined;
  return { servers, ...(credentials ?? {}), ...(tls === undefined ? {} : { tls }) };
}

/** `urls` as messages and logs may show them: without their credentials. */
export function shownUrls(urls: readonly string[]): string {
  return urls.map((raw) => withoutCredentials(new URL(raw))).join(',');
}

function withoutCredentials(url: URL): string {
  return `${url.protocol}//${url.host}`;
}
