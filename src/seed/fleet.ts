// A realistic, deterministic synthetic fleet, produced as the agent events that would describe it.
import { APP_ENVS, ENVIRONMENTS, JAVA_RUNTIMES, LIBRARIES, REGIONS, TEAMS } from './libraries.ts';
import { Random } from './random.ts';

export interface FleetSpec {
  vms: number;
  componentsPerVm: number;
  /** Distinct application methods in the fleet; each is loaded by at least one VM. */
  methods: number;
  appEnvs: number;
  /** Tag keys per VM beyond AppEnv: env, region, team, then tagN. */
  tags: number;
  seed: number;
  /** "Now" of the fleet: VMs started during the `days` before it. */
  now: number;
  days: number;
}

export const DEFAULT_FLEET: Omit<FleetSpec, 'now'> = { vms: 1000, componentsPerVm: 20, methods: 20_000, appEnvs: 6, tags: 3, seed: 1, days: 30 };

/** Methods every VM of an AppEnv loads: its framework entry points. */
const SHARED_METHODS = 20;
const METHODS_PER_CLASS = 10;
const DAY = 86_400_000;

type RawEvent = Record<string, unknown>;

function methodName(index: number): { sourceName: string; className: string; methodName: string } {
  const classIndex = Math.floor(index / METHODS_PER_CLASS);
  const packageIndex = Math.floor(classIndex / 25);
  const signatures = ['()', '(java.lang.String)', '(int, int)', '(java.util.List)', '(long)', '(java.lang.Object, boolean)'];
  return {
    sourceName: `app-module-${Math.floor(packageIndex / 10)}.jar`,
    className: `com/acme/module${Math.floor(packageIndex / 10)}/pkg${packageIndex}/Service${classIndex}`,
    methodName: `method${index % METHODS_PER_CLASS}${signatures[index % signatures.length]}`,
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
    for (let m = 0; m < shared; m++) code.push(methodName(m));
    for (let m = shared + v; m < spec.methods; m += spec.vms) code.push(methodName(m));
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
