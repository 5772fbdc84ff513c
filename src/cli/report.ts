// `jvmlens report`: schedule a report on a running service, wait for it, and write every page's items; or
// list, get and delete reports.
import { propertyNames, SCHEMAS } from '../http/openapi/schemas.ts';
import type { Schema } from '../http/openapi/schemas.ts';
import type { ParsedArgs } from './args.ts';
import { UsageError } from './args.ts';
import { call, callJson, clientFrom, clientNotes, parseClientArgs } from './client.ts';
import type { ApiClient } from './client.ts';
import { flattenNested, ItemWriter } from './formats.ts';
import type { Format } from './formats.ts';
import { formatOption, openOutput } from './output.ts';
import type { Output } from './output.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const REPORT_USAGE: readonly Usage[] = [
  {
    call: 'jvmlens report jvm|code|component [options]',
    does: 'schedule a report, wait, write its items',
    example: 'jvmlens report component --filter "componentName = \'log4j-core\'" --group-by tags.env --format csv',
    notes: [
      '--filter EXPR (repeatable) --group-by FIELD[,FIELD] --sort-by FIELD=ASC|DESC[,...] --name NAME',
      'jvm, code: --from T --to T; component: --start-time T --end-time T --detail',
      '--format json|ndjson|csv (default json) --output FILE (default standard output)',
    ],
  },
  { call: 'jvmlens report list jvm|code|component [--state S] [--name TEXT] [--limit N]', does: 'the family\'s reports, newest first' },
  { call: 'jvmlens report get jvm|code|component REPORT_ID [--format F] [--output FILE]', does: 'every page of a finished report' },
  {
    call: 'jvmlens report delete jvm|code|component REPORT_ID',
    does: 'delete (cancels a running one)',
    notes: clientNotes('0 SUCCEEDED, 5 FAILED, 6 PARTIALLY_FAILED, 7 TIMED_OUT (the items produced are written)'),
  },
];

type Family = 'jvm' | 'code' | 'component';

interface FamilyApi {
  create: string;
  base: string;
  /** Body fields this family takes, by option. */
  times: Record<string, string>;
}

const FAMILIES: Record<Family, FamilyApi> = {
  jvm: { create: '/public/report/jvmInventory', base: '/public/report/jvmInventory', times: { from: 'from', to: 'to' } },
  code: { create: '/public/report/codeInventory', base: '/public/report/codeInventory', times: { from: 'from', to: 'to' } },
  component: { create: '/public/component/report/schedule', base: '/public/component/report', times: { 'start-time': 'startTime', 'end-time': 'endTime' } },
};

/** Final states other than SUCCEEDED, with their exit status. */
const EXIT_STATUS: Record<string, number> = { SUCCEEDED: 0, FAILED: 5, PARTIALLY_FAILED: 6, TIMED_OUT: 7 };
const POLL_MS = 200;
const OUTPUT_OPTIONS = ['format', 'output'];

type Body = Record<string, unknown>;

function family(word: string | undefined): Family {
  if (word === 'jvm' || word === 'code' || word === 'component') return word;
  throw new UsageError(`a report family is jvm, code or component${word === undefined ? '' : `, not '${word}'`}\n\n${formatUsages(REPORT_USAGE)}`);
}

/** Values of a repeatable option that may also hold comma-separated values. */
function list(parsed: ParsedArgs, name: string): string[] {
  return (parsed.repeated.get(name) ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '');
}

function requestBody(kind: Family, parsed: ParsedArgs): Body {
  const body: Body = {};
  const filter = parsed.repeated.get('filter') ?? [];
  if (filter.length > 0) body.filter = filter;
  const groupBy = list(parsed, 'group-by');
  if (groupBy.length > 0) body.groupBy = groupBy;
  const sortBy = list(parsed, 'sort-by');
  if (sortBy.length > 0) body.sortBy = sortBy;
  const name = parsed.options.get('name');
  if (name !== undefined) body.reportName = name;
  for (const [option, field] of Object.entries(FAMILIES[kind].times)) {
    const value = parsed.options.get(option);
    if (value !== undefined) body[field] = value;
  }
  for (const option of ['from', 'to', 'start-time', 'end-time']) {
    if (parsed.options.has(option) && !(option in FAMILIES[kind].times)) {
      throw new UsageError(`--${option} is not an option of ${kind} reports; they take ${Object.keys(FAMILIES[kind].times).map((o) => `--${o}`).join(' and ')}`);
    }
  }
  if (parsed.options.has('detail')) {
    if (kind !== 'component') throw new UsageError('--detail is an option of component reports only');
    body.detail = true;
  }
  return body;
}

/** A line on standard error while waiting, redrawn in place; nothing when standard error is not a terminal. */
function progress(): { update(text: string): void; done(): void } {
  if (process.stderr.isTTY !== true) return { update: () => undefined, done: () => undefined };
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let frame = 0;
  return {
    update: (text) => process.stderr.write(`\r\x1b[2K${frames[frame++ % frames.length]} ${text}`),
    done: () => process.stderr.write('\r\x1b[2K'),
  };
}

async function waitFor(client: ApiClient, kind: Family, reportId: string): Promise<Body> {
  const started = Date.now();
  const line = progress();
  try {
    for (;;) {
      const body = await callJson<Body>(client, 'GET', `${FAMILIES[kind].base}/${encodeURIComponent(reportId)}`);
      if (body.state !== 'PROCESSING') return body;
      line.update(`report ${reportId}: ${String(body.state)} for ${((Date.now() - started) / 1000).toFixed(1)} s`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    line.done();
  }
}

/** An ungrouped item's fields, from the API's schemas (a grouped code item adds the count). */
const JVM_FIELDS = propertyNames((SCHEMAS.JvmItem.anyOf as Schema[])[0]);
const CODE_FIELDS = propertyNames(SCHEMAS.CodeItem).filter((field) => field !== 'count');

/** A listed report's fields (the API's schemas): CSV's header when the family has no reports. */
const LIST_FIELDS: Record<Family, string[]> = {
  jvm: propertyNames(SCHEMAS.JvmReportCreated),
  code: propertyNames(SCHEMAS.CodeReportCreated),
  component: propertyNames(SCHEMAS.ComponentReportCreated),
};

/**
 * The fields a report's items have, in their order, from the request the report echoes: what CSV's header
 * names when the report has no items. `test/cli/report.test.ts` checks them against reports that have items.
 */
function itemFields(kind: Family, report: Body): string[] {
  const request = ((kind === 'component' ? report.parameters : report.params) ?? {}) as { groupBy?: string[]; detail?: boolean };
  const groupBy = request.groupBy ?? [];
  if (kind === 'component') return [...groupBy, 'componentName', 'componentVersion', 'count', ...(request.detail === true ? ['vmIds'] : [])];
  if (groupBy.length === 0) return kind === 'jvm' ? JVM_FIELDS : CODE_FIELDS;
  return kind === 'jvm' ? [...groupBy, 'count'] : [...groupBy, 'firstSeen', 'lastSeen', 'count'];
}

/** Writes every page of a finished report and returns the exit status its state calls for. */
async function writeReport(client: ApiClient, kind: Family, first: Body, format: Format, output: Output): Promise<number> {
  const writer = new ItemWriter(format, (text) => output.write(text));
  writer.expectColumns(itemFields(kind, first));
  const pages = Number(first.totalPages ?? 1);
  for (let page = 0; page < pages && !output.readerGone; page++) {
    const body = page === 0 ? first : await callJson<Body>(client, 'GET', `${FAMILIES[kind].base}/${encodeURIComponent(String(first.reportId))}?page=${page}`);
    const data = (body.data ?? []) as Body[];
    writer.add(kind === 'component' ? flattenNested(data) : data);
  }
  writer.finish();
  output.close();
  const state = String(first.state);
  if (state !== 'SUCCEEDED') {
    const errors = ((first.errors ?? []) as { code: string; message: string }[]).map((error) => `${error.code}: ${error.message}`);
    process.stderr.write(`jvmlens: report ${String(first.reportId)} ended ${state}${errors.length > 0 ? `: ${errors.join('; ')}` : ''}\n`);
  }
  return EXIT_STATUS[state] ?? 1;
}

/** Runs a report sub-command; resolves to the exit status. */
export async function reportCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'list': {
      const parsed = parseClientArgs(rest, ['state', 'name', 'limit', ...OUTPUT_OPTIONS]);
      const kind = family(parsed.positional[0]);
      const query = new URLSearchParams();
      for (const [option, parameter] of [['state', 'state'], ['name', 'reportName'], ['limit', 'limit']]) {
        const value = parsed.options.get(option);
        if (value !== undefined) query.set(parameter, value);
      }
      const format = formatOption(parsed);
      const client = clientFrom(parsed, env);
      const output = openOutput(parsed);
      const body = await callJson<Body>(client, 'GET', `${FAMILIES[kind].base}${query.size > 0 ? `?${query}` : ''}`);
      const writer = new ItemWriter(format, (text) => output.write(text));
      writer.expectColumns(LIST_FIELDS[kind]);
      writer.add((body.data ?? []) as Body[]);
      writer.finish();
      output.close();
      return 0;
    }
    case 'get': {
      const parsed = parseClientArgs(rest, OUTPUT_OPTIONS);
      const kind = family(parsed.positional[0]);
      const reportId = parsed.positional[1];
      if (reportId === undefined) throw new UsageError(`report get needs a family and a REPORT_ID\n\n${formatUsages(REPORT_USAGE)}`);
      const format = formatOption(parsed);
      const client = clientFrom(parsed, env);
      const output = openOutput(parsed);
      return writeReport(client, kind, await waitFor(client, kind, reportId), format, output);
    }
    case 'delete': {
      const parsed = parseClientArgs(rest, []);
      const kind = family(parsed.positional[0]);
      const reportId = parsed.positional[1];
      if (reportId === undefined) throw new UsageError(`report delete needs a family and a REPORT_ID\n\n${formatUsages(REPORT_USAGE)}`);
      await call(clientFrom(parsed, env), 'DELETE', `${FAMILIES[kind].base}/${encodeURIComponent(reportId)}`);
      process.stderr.write(`jvmlens: report ${reportId} deleted\n`);
      return 0;
    }
    default: {
      const kind = family(action);
      const parsed = parseClientArgs(rest, ['filter', 'group-by', 'sort-by', 'from', 'to', 'start-time', 'end-time', 'name', ...OUTPUT_OPTIONS], ['detail']);
      if (parsed.positional.length > 0) throw new UsageError(`unexpected argument '${parsed.positional[0]}'\n\n${formatUsages(REPORT_USAGE)}`);
      const body = requestBody(kind, parsed);
      const format = formatOption(parsed);
      const client = clientFrom(parsed, env);
      const output = openOutput(parsed);
      const created = await callJson<Body>(client, 'POST', FAMILIES[kind].create, body);
      return writeReport(client, kind, await waitFor(client, kind, String(created.reportId)), format, output);
    }
  }
}
