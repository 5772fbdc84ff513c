// `jvmlens report`, `cve events` and `instance` against real services: every format, reports of several
// pages, each final state's exit status, list/get/delete, and bad options with a clear message; an output
// file is written only once the service answered.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { componentsEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { ingestAll, runReport } from '../helpers/reports.ts';
import { MAIN, request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const FLEET = { vms: 40, componentsPerVm: 6, methods: 300, appEnvs: 2, tags: 3, seed: 3, now: Date.now(), days: 20 };
const LOG4J = { componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' };

let service: RunningService;

/** The CLI against a service, URL and key from the environment as a script would set them. */
function cli(target: RunningService, args: string[]) {
  return runCli(args, { JVMLENS_URL: `${target.apiUrl}/public`, JVMLENS_API_KEY: target.apiKey });
}

/** The CLI writing into a pipe its reader closed first, as `| head -1` leaves it: the exit status and standard error. */
function cliIntoClosedPipe(target: RunningService, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, JVMLENS_URL: target.apiUrl, JVMLENS_API_KEY: target.apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

async function serviceWithFleet(args: string[] = []): Promise<RunningService> {
  const started = await startService({ args });
  await ingestAll(started, fleetBatches(FLEET, 20));
  return started;
}

before(async () => {
  // Small pages: every report below spans several.
  service = await serviceWithFleet(['--page-bytes', '4000']);
  const now = Date.now();
  const events = [0, 1, 2, 3, 4].flatMap((i) => [startEvent(`cve-vm-${i}`, now - 9000, `cve-host-${i}`, { env: 'prod' }), componentsEvent(`cve-vm-${i}`, now - 8000, [LOG4J])]);
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, events)).status, 200);
});
after(() => service.stop());

describe('jvmlens report', () => {
  it('writes every page of a component report as NDJSON, flattened, equal to the API\'s items', async () => {
    const api = await runReport(service, 'component', { groupBy: ['tags.env'] });
    assert.ok(api.pages.length > 1, 'the report spans several pages');
    const run = await cli(service, ['report', 'component', '--group-by', 'tags.env', '--format', 'ndjson']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '', 'no progress on a pipe');
    const items = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(items, api.items);
  });

  it('writes CSV with the group fields as columns, and JSON to a file', async () => {
    const csv = await cli(service, ['report', 'component', '--group-by', 'tags.env', '--filter', "componentName LIKE '^j'", '--format', 'csv']);
    assert.equal(csv.code, 0, csv.stderr);
    const lines = csv.stdout.trimEnd().split('\r\n');
    assert.equal(lines[0], 'tags.env,componentName,componentVersion,count');
    assert.ok(lines.length > 2);
    assert.ok(lines.slice(1).every((line) => /^[^,]*,j[^,]*,[^,]+,\d+$/.test(line)), lines.slice(1, 4).join(' | '));
    const file = join(tempDir('jvmlens-cli-'), 'jvms.json');
    const json = await cli(service, ['report', 'jvm', '--from', '30d', '--sort-by', 'hostName=DESC', '--output', file]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stdout, '');
    const written = JSON.parse(readFileSync(file, 'utf8')) as { hostName: string }[];
    assert.equal(written.length, FLEET.vms + 5);
    const hosts = written.map((vm) => vm.hostName);
    assert.deepEqual(hosts, [...hosts].sort().reverse());
  });

  it('writes CSV\'s header row for a report with no items: the columns the same report has with items', async () => {
    const shapes: [string, string[], string][] = [
      ['jvm', [], "hostName = 'nobody'"],
      ['jvm', ['--group-by', 'javaVersion,tags.env'], "hostName = 'nobody'"],
      ['code', [], "sourceName = 'nothing.jar'"],
      ['code', ['--group-by', 'sourceName,className'], "sourceName = 'nothing.jar'"],
      ['component', ['--group-by', 'tags.env,hostName', '--detail'], "componentName = 'nothing'"],
    ];
    for (const [family, options, matchesNone] of shapes) {
      const some = await cli(service, ['report', family, ...options, '--format', 'csv']);
      assert.equal(some.code, 0, some.stderr);
      const header = some.stdout.split('\r\n')[0];
      assert.ok(some.stdout.split('\r\n').length > 2, `${family} ${options.join(' ')} has items`);
      const none = await cli(service, ['report', family, ...options, '--filter', matchesNone, '--format', 'csv']);
      assert.equal(none.code, 0, none.stderr);
      assert.equal(none.stdout, `${header}\r\n`, `${family} ${options.join(' ')}`);
    }
    const events = await cli(service, ['cve', 'events', '--tag', 'env=prod', '--format', 'csv']);
    const noEvents = await cli(service, ['cve', 'events', '--tag', 'env=nowhere', '--format', 'csv']);
    assert.equal(noEvents.code, 0, noEvents.stderr);
    assert.equal(noEvents.stdout, `${events.stdout.split('\r\n')[0]}\r\n`);
  });

  it('lists, gets and deletes reports', async () => {
    const created = await cli(service, ['report', 'code', '--group-by', 'sourceName', '--name', 'cli-listed', '--format', 'ndjson']);
    assert.equal(created.code, 0, created.stderr);
    const listed = await cli(service, ['report', 'list', 'code', '--name', 'cli-listed', '--format', 'ndjson']);
    assert.equal(listed.code, 0, listed.stderr);
    const [meta] = listed.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(meta.state, 'SUCCEEDED');
    const got = await cli(service, ['report', 'get', 'code', meta.reportId, '--format', 'ndjson']);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, created.stdout);
    const deleted = await cli(service, ['report', 'delete', 'code', meta.reportId]);
    assert.equal(deleted.code, 0, deleted.stderr);
    const gone = await cli(service, ['report', 'get', 'code', meta.reportId]);
    assert.equal(gone.code, 3);
    assert.match(gone.stderr, /404/);
  });

  it('refuses bad options with exit status 2 and says why', async () => {
    const cases: [string[], RegExp][] = [
      [['report', 'component', '--from', '3d'], /--from is not an option of component reports; they take --start-time and --end-time/],
      [['report', 'jvm', '--detail'], /--detail is an option of component reports only/],
      [['report', 'inventory'], /a report family is jvm, code or component, not 'inventory'/],
      [['report', 'jvm', '--format', 'xml'], /--format takes json, ndjson, csv, not 'xml'/],
      [['report', 'jvm', '--grup-by', 'day'], /did you mean --group-by/],
      [['report', 'jvm', '--fromat', 'csv'], /unknown option --fromat; did you mean --format\?/],
      [['report', 'component', '--detail=true'], /--detail takes no value: give --detail alone/],
      [['cve', 'events', '--all=true'], /--all takes no value: give --all alone/],
      [['reprt', 'jvm'], /unknown command 'reprt'; did you mean report\?/],
      [['help', 'nothing'], /no help on 'nothing'/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(service, args);
      assert.equal(run.code, 2, args.join(' '));
      assert.match(run.stderr, message);
    }
    const badFilter = await cli(service, ['report', 'jvm', '--filter', 'state =']);
    assert.equal(badFilter.code, 3, 'the service refuses a bad filter');
    assert.match(badFilter.stderr, /400 BAD_FILTER/);
  });

  it('lists reports as CSV with every field any of them has, and the header alone when none matches', async () => {
    const named = await cli(service, ['report', 'jvm', '--name', 'cli-csv-named', '--format', 'ndjson']);
    assert.equal(named.code, 0, named.stderr);
    // Newer, so listed first: before, its fields (no reportName) were every row's columns.
    const unnamed = await cli(service, ['report', 'jvm', '--format', 'ndjson']);
    assert.equal(unnamed.code, 0, unnamed.stderr);
    const listed = await cli(service, ['report', 'list', 'jvm', '--format', 'csv']);
    assert.equal(listed.code, 0, listed.stderr);
    const [header, ...rows] = listed.stdout.trimEnd().split('\r\n');
    const nameColumn = header.split(',').indexOf('reportName');
    assert.ok(nameColumn >= 0, header);
    assert.ok(rows.some((row) => row.split(',')[nameColumn] === 'cli-csv-named'), rows.join('\n'));
    const none = await cli(service, ['report', 'list', 'jvm', '--name', 'no-report-is-named-so', '--format', 'csv']);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, 'reportId,state,reportName,userId,requestTime,startTime,finishTime,params,stateMessages,errors\r\n');
  });

  it('writes nothing when a request fails: an existing output file stays as it was, standard output empty', async () => {
    const keep = join(tempDir('jvmlens-cli-'), 'keep.csv');
    const cases: [string[], number][] = [
      [['cve', 'events', '--all', '--format', 'csv', '--url', 'http://127.0.0.1:1'], 4],
      [['cve', 'events', '--key', 'wrong-key'], 3],
      [['cve', 'events', '--limit', '0'], 3],
      [['report', 'jvm', '--filter', 'state ='], 3],
      [['report', 'get', 'jvm', 'no-such-report', '--format', 'ndjson'], 3],
      [['report', 'list', 'code', '--key', 'wrong-key'], 3],
      [['sbom', 'no-such-vm'], 3],
    ];
    for (const [args, status] of cases) {
      writeFileSync(keep, 'kept\n');
      const toFile = await cli(service, [...args, '--output', keep]);
      assert.equal(toFile.code, status, `${args.join(' ')}: ${toFile.stderr}`);
      assert.equal(readFileSync(keep, 'utf8'), 'kept\n', args.join(' '));
      const toStdout = await cli(service, args);
      assert.equal(toStdout.code, status, `${args.join(' ')}: ${toStdout.stderr}`);
      assert.equal(toStdout.stdout, '', args.join(' '));
    }
  });

  it('refuses an --output path it cannot write with one line and exit status 2, before asking the service', async () => {
    const newest = async () => (await request<{ data: { reportId: string }[] }>(`${service.apiUrl}/public/report/jvmInventory`, { key: service.apiKey })).body.data[0]?.reportId;
    const before = await newest();
    const directory = tempDir('jvmlens-cli-');
    const cases: [string[], string][] = [
      [['report', 'jvm', '--output', '/nonexistent/dir/x.json'], 'cannot write --output /nonexistent/dir/x.json: no directory /nonexistent/dir'],
      [['report', 'get', 'jvm', 'any-report', '--output', directory], `cannot write --output ${directory}: it is a directory`],
      [['report', 'list', 'jvm', '--output', '/nonexistent/x.csv'], 'cannot write --output /nonexistent/x.csv: no directory /nonexistent'],
      [['cve', 'events', '--output', '/nonexistent/x.csv'], 'cannot write --output /nonexistent/x.csv: no directory /nonexistent'],
      [['sbom', 'cve-vm-0', '--output', '/nonexistent/x.json'], 'cannot write --output /nonexistent/x.json: no directory /nonexistent'],
      [['sbom', 'cve-vm-0', '--output', `${MAIN}/x.json`], `cannot write --output ${MAIN}/x.json: ${MAIN} is not a directory`],
    ];
    for (const [args, message] of cases) {
      const run = await cli(service, args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stderr, `jvmlens: ${message}\n`);
    }
    assert.equal(await newest(), before, 'no report scheduled');
  });

  it('refuses the service\'s settings, which a client command does not take, with the nearest of its own options', async () => {
    const cases: [string[], RegExp][] = [
      [['cve', 'events', '--host', 'payments-x'], /unknown option --host; did you mean --host-name\?/],
      [['report', 'jvm', '--workers', '2'], /unknown option --workers \(known: /],
      [['report', 'list', 'jvm', '--page-bytes=5000'], /unknown option --page-bytes \(known: /],
      [['instance', 'cve-vm-0', '--data-dir', '/tmp'], /unknown option --data-dir \(known: /],
      [['sbom', 'cve-vm-0', '--api-key', 'k'], /unknown option --api-key \(known: /],
      [['--host', 'payments-x', 'cve', 'events'], /unknown option --host; did you mean --host-name\?/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(service, args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stdout, '', args.join(' '));
      assert.match(run.stderr, message);
    }
  });

  it('stops reading pages once its reader has gone, as after `| head -1`: a report\'s, and CVE events\' with --all', async () => {
    const api = await runReport(service, 'jvmInventory', { from: '30d' });
    assert.ok(api.pages.length >= 4, `the report spans ${api.pages.length} pages`);
    // A stand-in for the service's address that passes every GET on and counts them.
    let reads = 0;
    const counting = createServer((request, response) => {
      reads++;
      void fetch(`${service.apiUrl}${request.url ?? '/'}`, { headers: { 'x-api-key': service.apiKey } }).then(async (answer) => {
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
    try {
      const target = { ...service, apiUrl: `http://127.0.0.1:${(counting.address() as AddressInfo).port}` };
      const report = await cliIntoClosedPipe(target, ['report', 'get', 'jvm', api.reportId, '--format', 'ndjson']);
      assert.equal(report.code, 0, report.stderr);
      // The report's record, then at most the page asked for while the pipe's error was on its way.
      assert.ok(reads <= 2, `${reads} requests for a report of ${api.pages.length} pages`);
      reads = 0;
      const events = await cliIntoClosedPipe(target, ['cve', 'events', '--tag', 'env=prod', '--limit', '1', '--all']);
      assert.equal(events.code, 0, events.stderr);
      assert.ok(reads <= 2, `${reads} requests for CVE events of 5 pages and more`);
    } finally {
      counting.close();
    }
  });

  it('explains every option with an example in help', async () => {
    const help = await runCli(['help', 'report']);
    assert.equal(help.code, 0);
    for (const option of ['--filter', '--group-by', '--sort-by', '--from', '--to', '--start-time', '--end-time', '--detail', '--name', '--format', '--output', '--url', '--key', 'e.g. jvmlens report']) assert.ok(help.stdout.includes(option), option);
  });
});

describe('exit status of a report that does not succeed', () => {
  for (const [faults, state, status] of [['partition-fail', 'PARTIALLY_FAILED', 6], ['finalize-fail', 'FAILED', 5]] as const) {
    it(`${state} exits ${status} with the report's errors`, async () => {
      const faulty = await serviceWithFleet(['--test-faults', faults, '--test-partition-size', '7']);
      try {
        const run = await cli(faulty, ['report', 'jvm', '--group-by', 'state']);
        assert.equal(run.code, status, run.stderr);
        assert.match(run.stderr, new RegExp(`ended ${state}`));
        if (state === 'PARTIALLY_FAILED') {
          assert.ok(JSON.parse(run.stdout).length > 0, 'the data of the other partitions is written');
          const piped = await cliIntoClosedPipe(faulty, ['report', 'jvm', '--group-by', 'state', '--format', 'csv']);
          assert.equal(piped.code, status, `a reader that stops early leaves the report's status: ${piped.stderr}`);
        }
      } finally {
        await faulty.stop();
      }
    });
  }

  it('TIMED_OUT exits 7', async () => {
    const slow = await serviceWithFleet(['--test-faults', 'slow-partition', '--report-timeout-ms', '100']);
    try {
      const run = await cli(slow, ['report', 'jvm']);
      assert.equal(run.code, 7, run.stderr);
      assert.match(run.stderr, /ended TIMED_OUT/);
    } finally {
      await slow.stop();
    }
  });
});

describe('jvmlens cve events and instance', () => {
  it('follows afterToken to the end with --all', async () => {
    const one = await cli(service, ['cve', 'events', '--tag', 'env=prod', '--limit', '2', '--format', 'ndjson']);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout.trim().split('\n').length, 2, 'one page without --all');
    const all = await cli(service, ['cve', 'events', '--tag', 'env=prod', '--limit', '2', '--all', '--format', 'csv']);
    assert.equal(all.code, 0, all.stderr);
    const rows = all.stdout.trimEnd().split('\r\n');
    assert.ok(rows[0].startsWith('componentName,componentVersion,cveId'), rows[0]);
    const expected = (await (await fetch(`${service.apiUrl}/public/cve/events?tags.env=prod&limit=1000`, { headers: { 'x-api-key': service.apiKey } })).json()) as { data: unknown[] };
    assert.ok(expected.data.length > 4);
    assert.equal(rows.length - 1, expected.data.length, 'every event, across pages of 2');
    const vms = new Set(rows.slice(1).flatMap((row) => row.split(',').filter((cell) => cell.startsWith('cve-vm-'))));
    assert.equal(vms.size, 5, 'every VM given Log4Shell');
  });

  it('filters by CVE id with --cve-id', async () => {
    const log4shell = await cli(service, ['cve', 'events', '--tag', 'env=prod', '--cve-id', 'CVE-2021-44228', '--format', 'ndjson']);
    assert.equal(log4shell.code, 0, log4shell.stderr);
    const events = log4shell.stdout.trim().split('\n').map((line) => JSON.parse(line) as { cveId: string; vmId: string });
    assert.deepEqual(new Set(events.map((event) => event.cveId)), new Set(['CVE-2021-44228']));
    assert.equal(new Set(events.map((event) => event.vmId)).size, 5, 'every VM given Log4Shell');
    const other = await cli(service, ['cve', 'events', '--tag', 'env=prod', '--cve-id', 'CVE-1999-0001', '--format', 'ndjson']);
    assert.equal(other.code, 0, other.stderr);
    assert.equal(other.stdout, '');
  });

  it('shows a VM and its tags', async () => {
    const vm = await cli(service, ['instance', 'cve-vm-0']);
    assert.equal(vm.code, 0, vm.stderr);
    assert.equal(JSON.parse(vm.stdout).vmId, 'cve-vm-0');
    const tags = await cli(service, ['instance', 'cve-vm-0', '--tags']);
    assert.deepEqual(JSON.parse(tags.stdout), [{ key: 'env', value: 'prod' }]);
    const missing = await cli(service, ['instance', 'nobody']);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /404 VM_NOT_FOUND/);
  });

  it('takes --consistency local or read-your-writes, and says so for another (a cluster\'s side: test/cluster/local-reads.test.ts)', async () => {
    for (const consistency of ['local', 'read-your-writes']) {
      const vm = await cli(service, ['instance', 'cve-vm-0', '--consistency', consistency]);
      assert.equal(vm.code, 0, vm.stderr);
      assert.equal(JSON.parse(vm.stdout).vmId, 'cve-vm-0');
    }
    const wrong = await cli(service, ['cve', 'events', '--consistency', 'eventual']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--consistency is read-your-writes or local, not 'eventual'/);
  });
});
