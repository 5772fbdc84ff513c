// A realistic, deterministic synthetic fleet, produced as the agent events that would describe it.
import { APP_ENVS, ENVIRONMENTS, JAVA_RUNTIMES, LIBRARIES, REGIONS, TEAMS } from './libraries.ts';
import { Random } from './random.ts';

export interface FleetSpec {
  vms: number;
  componentsPerVm: number;
  /** Distinct application methods in the fleet; each is loaded by at least one VM. */
  methods: number;
  /** How the methods are named (METHOD_NAMES); DEFAULT_FLEET's way when not given. */
  methodNames?: MethodNames;
  appEnvs: number;
  /** Tag keys per VM beyond AppEnv: env, region, team, then tagN. */
  tags: number;
  seed: number;
  /** "Now" of the fleet: VMs started during the `days` before it. */
  now: number;
  days: number;
}

/**
 * `repeated`: ten names with six parameter lists (`method3(java.util.List)`), 31 distinct names in a batch of
 * 10,000 items, the fleet every recorded figure before the choice was measured on. `realistic`: what real
 * classes declare, a constructor, then names of a verb and a noun with parameters of the JDK's and the servlet
 * API's types; about 60 % of the names of such a batch are distinct, as in batches of Tomcat's, log4j's and
 * Maven's classes (63 to 74 %). Names repeated flatter whatever packs or compresses strings (the cluster's log).
 */
export const METHOD_NAMES = ['repeated', 'realistic'] as const;
export type MethodNames = (typeof METHOD_NAMES)[number];

export const DEFAULT_FLEET: Required<Omit<FleetSpec, 'now'>> = { vms: 1000, componentsPerVm: 20, methods: 20_000, methodNames: 'repeated', appEnvs: 6, tags: 3, seed: 1, days: 30 };

/** Methods every VM of an AppEnv loads: its framework entry points. */
const SHARED_METHODS = 20;
const METHODS_PER_CLASS = 10;
const DAY = 86_400_000;

type RawEvent = Record<string, unknown>;

const SIGNATURES = ['()', '(java.lang.String)', '(int, int)', '(java.util.List)', '(long)', '(java.lang.Object, boolean)'];
const VERBS = [
  'get', 'set', 'is', 'has', 'create', 'find', 'update', 'remove', 'handle', 'process', 'build', 'parse', 'to', 'apply', 'validate',
  'load', 'save', 'check', 'init', 'close', 'read', 'write', 'resolve', 'convert', 'compute', 'register', 'on', 'with', 'add', 'visit',
];
const NOUNS = [
  'Name', 'Value', 'Id', 'Type', 'Config', 'Context', 'Request', 'Response', 'Session', 'User', 'Order', 'Item', 'Entry', 'Key', 'Path',
  'Stream', 'Buffer', 'Handler', 'Listener', 'Factory', 'Builder', 'Result', 'Status', 'Event', 'Message', 'Header', 'Attribute',
  'Property', 'Resource', 'Service', 'Cache', 'Token', 'Count', 'Size', 'Index', 'Source', 'Target', 'State', 'Mode', 'Timeout',
  'Charset', 'Locale', 'Principal', 'Filter', 'Mapping', 'Version', 'Parameters',
];
const PARAMETERS = [
  '', '', 'java.lang.String', 'int', 'long', 'boolean', 'java.lang.Object', 'java.util.List', 'java.util.Map', 'byte[]',
  'java.lang.String, int', 'java.lang.String, java.lang.Object', 'jakarta.servlet.http.HttpServletRequest',
  'jakarta.servlet.http.HttpServletRequest, jakarta.servlet.http.HttpServletResponse', 'java.io.InputStream', 'char[], int, int',
];

/** A 32-bit mix of an integer (murmur3's finaliser): names that vary without drawing on the fleet's random stream. */
function mix(n: number): number {
  let h = Math.imul(n ^ (n >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The name of method `index`, the `inClass`-th of class `classIndex`. */
function nameOf(index: number, classIndex: number, inClass: number, names: MethodNames): string {
  if (names === 'repeated') return `method${inClass}${SIGNATURES[index % SIGNATURES.length]}`;
  const h = mix(index);
  // A class's methods take consecutive nouns, so no two of them share a name.
  const name = inClass === 0 ? '<init>' : `${VERBS[h % VERBS.length]}${NOUNS[(classIndex * 7 + inClass) % NOUNS.length]}`;
  return `${name}(${PARAMETERS[(h >>> 8) % PARAMETERS.length]})`;
}

function methodName(index: number, names: MethodNames): { sourceName: string; className: string; methodName: string } {
  const classIndex = Math.floor(index / METHODS_PER_CLASS);
  const packageIndex = Math.floor(classIndex / 25);
  return {
    sourceName: `app-module-${Math.floor(packageIndex / 10)}.jar`,
    className: `com/acme/module${Math.floor(packageIndex / 10)}/pkg${packageIndex}/Service${classIndex}`,
    methodName: nameOf(index, classIndex, index % METHODS_PER_CLASS, names),
  };
}

function libraryFor(index: number): { groupId: string; artifactId: string; versions: readonly string[]; className: string } {
  if (index < LIBRARIES.length) return LIBRARIES[index];
  const n = index - LIBRARIES.length;
  return { groupId: `com.example.lib${n % 50}`, artifactId: `library-${n}`, versions: ['1.0.0', '1.1.0', '2.0.0', '2.1.3'], className: `com/example/lib${n}/Api` };
}

/** Yields batches of raw agent events, `vmsPerBatch` VMs at a time, in the order an agent would send them. */
export function* fleetBatches(spec: FleetSpec, vmsPerBatch = 250): Generator<RawEvent[]> {
  const random = new Random(spec.seed);
  const names = spec.methodNames ?? DEFAULT_FLEET.methodNames;
  const appEnvs = APP_ENVS.slice(0, Math.max(1, Math.min(spec.appEnvs, APP_ENVS.length)));
  while (appEnvs.length < spec.appEnvs) appEnvs.push(`app-env-${appEnvs.length}`);
  const libraryCount = Math.max(LIBRARIES.length, spec.componentsPerVm * 2);
  let batch: RawEvent[] = [];
  for (let v = 0; v < spec.vms; v++) {
    const vmId = random.uuid();
    const appEnv = appEnvs[v % appEnvs.length];
    const region = random.pick(REGIONS);
    const runtime = random.weighted(JAVA_RUNTIMES);
    const startTime = spec.now - random.int(spec.days * DAY);
    const fate = random.next();
    const tags: Record<string, string> = { AppEnv: appEnv };
    const tagValues = [
      ['env', random.weighted(ENVIRONMENTS)],
      ['region', region],
      ['team', random.pick(TEAMS)],
    ] as const;
    for (let t = 0; t < spec.tags; t++) {
      if (t < tagValues.length) {
        // One VM in twenty has no env tag: reports group it under null.
        if (t === 0 && random.int(20) === 0) continue;
        tags[tagValues[t][0]] = tagValues[t][1];
      } else tags[`tag${t}`] = `value${random.int(10)}`;
    }
    const hostName = `${appEnv}-${region}-${(v % 9973).toString().padStart(4, '0')}`;
    batch.push({
      type: 'vm.start', vmId, time: startTime, agentVersion: random.pick(['1.4.2', '1.5.0', '1.5.1']), agentRevision: random.pick(['a1b2c3d', 'e4f5a6b']),
      mailbox: `mailbox-${region}`,
      inventory: {
        systemProperties: {
          'java.version': runtime.version, 'java.runtime.version': runtime.runtime, 'java.vm.vendor': runtime.vendor,
          'os.name': 'Linux', 'os.arch': random.weighted([['amd64', 4], ['aarch64', 1]] as const), 'user.dir': `/srv/${appEnv}`,
        },
        hostName,
        osEnvironment: { HOME: '', PATH: '', JAVA_HOME: '' },
        mainMethod: `com.acme.${appEnv}.Main`,
        cpuInfo: { 'Number of Processors': 4, 'Number of Assigned Logical Cores': 4, 'CPU Vendor': 'GenuineIntel', 'CPU Model Name': 'Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz', 'Number of Physical Cores': 2 },
      },
      jvmInfo: { vmName: 'OpenJDK 64-Bit Server VM', inputArguments: ['-Xmx2g'] },
      tags,
    });

    const components: RawEvent[] = [];
    const used: RawEvent[] = [];
    const chosen = new Set<number>();
    while (chosen.size < Math.min(spec.componentsPerVm, libraryCount)) chosen.add(random.int(libraryCount));
    for (const index of chosen) {
      const library = libraryFor(index);
      const version = library.versions[random.int(library.versions.length)];
      const sourceName = `${library.artifactId}-${version}.jar`;
      components.push({ componentName: library.artifactId, componentVersion: version, groupId: library.groupId, sourceName });
      // Half the components are actually used: their code is loaded.
      if (random.int(2) === 0) used.push({ sourceName, className: library.className, methodName: '<init>()' });
    }
    batch.push({ type: 'components', vmId, time: startTime + 1_000, items: components });

    const code: RawEvent[] = [...used];
    const shared = Math.min(SHARED_METHODS, spec.methods);
    for (let m = 0; m < shared; m++) code.push(methodName(m, names));
    for (let m = shared + v; m < spec.methods; m += spec.vms) code.push(methodName(m, names));
    batch.push({ type: 'code', vmId, time: startTime + 2_000, items: code });

    if (fate < 0.1) {
      batch.push({ type: 'vm.stop', vmId, time: startTime + random.int(Math.max(1, spec.now - startTime)) });
    } else if (fate < 0.2) {
      batch.push({ type: 'vm.heartbeat', vmId, time: Math.max(startTime, spec.now - 3_600_000 - random.int(DAY)) });
    } else {
      batch.push({ type: 'vm.heartbeat', vmId, time: spec.now - random.int(60_000) });
    }
    if ((v + 1) % vmsPerBatch === 0) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
