// Java tooling for the agent's tests: finds the JDK and Debian's JARs, builds the agent, compiles small programs, runs JVMs.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from '../helpers/service.ts';

export const AGENT_JAR = join(ROOT, 'agent', 'build', 'jvmlens-agent.jar');
/** Java sources used only by tests (the Probe), kept in the source tree beside this file. */
export const TEST_JAVA = join(ROOT, 'test', 'agent', 'java');

const IN_CI = process.env.CI === 'true';

function commandWorks(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { stdio: 'ignore' });
  return result.error === undefined && result.status === 0;
}

/**
 * Why the Java tests cannot run here, or false when they can. Without a JDK they are skipped with
 * the reason, except under CI=true, where they run (and `requireJava` fails them with the reason).
 */
export function javaSkipReason(): string | false {
  if (commandWorks('javac', ['-version']) && commandWorks('java', ['-version'])) return false;
  return IN_CI ? false : 'no JDK: javac/java not on PATH (install openjdk-17-jdk-headless)';
}

/** Fails with a clear message under CI=true when there is no JDK. */
export function requireJava(): void {
  if (!commandWorks('javac', ['-version'])) throw new Error('CI=true but no JDK: javac is not on PATH; .ci/run must install openjdk-17-jdk-headless');
}

export interface DebianJars {
  log4jCore: string;
  log4jApi: string;
  springCore: string;
}

/** The files a Debian package installed, or [] when dpkg or the package is missing. */
function packageFiles(name: string): string[] {
  const result = spawnSync('dpkg', ['-L', name], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.split('\n').filter((line) => line !== '') : [];
}

/**
 * The shortest matching name under /usr/share/java: the one a Debian user puts on a class path.
 * It may be a symbolic link (spring3-core.jar → spring3-core-3.x.jar), which the agent must handle.
 */
function jarIn(files: string[], pattern: RegExp): string | undefined {
  return files
    .filter((file) => file.startsWith('/usr/share/java/') && pattern.test(file.slice('/usr/share/java/'.length)))
    .sort((a, b) => a.length - b.length)[0];
}

/** Debian's log4j-core, log4j-api and spring-core JARs (liblog4j2-java, libspring-core-java). */
export function findDebianJars(): DebianJars | string {
  const log4j = packageFiles('liblog4j2-java');
  const spring = packageFiles('libspring-core-java');
  const log4jCore = jarIn(log4j, /^log4j-core(-[\d.]+)?\.jar$/);
  const log4jApi = jarIn(log4j, /^log4j-api(-[\d.]+)?\.jar$/);
  const springCore = jarIn(spring, /^spring\d*-core.*\.jar$/);
  if (log4jCore === undefined || log4jApi === undefined || springCore === undefined) {
    return "Debian's liblog4j2-java and libspring-core-java are not installed (apt-get install -y liblog4j2-java libspring-core-java)";
  }
  return { log4jCore, log4jApi, springCore };
}

let agentBuilt = false;

/** Builds agent/build/jvmlens-agent.jar once per test process (agent/build.sh is safe to run concurrently). */
export function buildAgent(): string {
  if (!agentBuilt) {
    execFileSync('bash', [join(ROOT, 'agent', 'build.sh')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    if (!existsSync(AGENT_JAR)) throw new Error(`agent/build.sh did not produce ${AGENT_JAR}`);
    agentBuilt = true;
  }
  return AGENT_JAR;
}

/** Compiles Java sources ({relative path: text}) into `dir/classes` and packs them as `dir/<jarName>`. */
export function compileJar(dir: string, sources: Record<string, string>, options: { classPath?: string[]; mainClass?: string; jarName?: string } = {}): string {
  const sourceDir = join(dir, 'src');
  const classes = join(dir, 'classes');
  mkdirSync(classes, { recursive: true });
  const files = Object.entries(sources).map(([path, text]) => {
    const file = join(sourceDir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  });
  const classPath = options.classPath ?? [];
  execFileSync('javac', ['-encoding', 'UTF-8', '-d', classes, ...(classPath.length > 0 ? ['-cp', classPath.join(':')] : []), ...files], { stdio: ['ignore', 'ignore', 'pipe'] });
  const jar = join(dir, options.jarName ?? 'app.jar');
  execFileSync('jar', ['--create', '--file', jar, ...(options.mainClass ? ['--main-class', options.mainClass] : []), '-C', classes, '.'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return jar;
}

export interface JavaRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The lines the agent wrote to standard error (prefix "jvmlens agent: "). */
  agentLines: string[];
  /** The vmId of the agent's start line, or null. */
  vmId: string | null;
}

/** The agent's own settings are removed from the inherited environment, so only what a test passes applies. */
function cleanEnvironment(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('JVMLENS_AGENT_') && name !== 'CRS_TAGS') env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * Runs `java args…` to completion, with stdin closed, unless `input` is given. Always with -Xverify:all, so the
 * JVM verifies every class, including those the agent's probes rewrite and those of the class path.
 */
export function runJava(args: string[], options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<JavaRun> {
  const verified = args.includes('-Xverify:all') ? args : ['-Xverify:all', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn('java', verified, { env: cleanEnvironment(options.env ?? {}), stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`java ${verified.join(' ')} did not finish in time:\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const agentLines = stderr.split('\n').filter((line) => line.startsWith('jvmlens agent: '));
      const start = agentLines.map((line) => /^jvmlens agent: vmId=(\S+) gateway=\S+$/.exec(line)).find((match) => match !== null);
      resolve({ code, stdout, stderr, agentLines, vmId: start?.[1] ?? null });
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/** The -javaagent option for the built agent with the given options ("gateway=…,apiKey=…"). */
export function javaagent(options: Record<string, string | number>): string {
  return `-javaagent:${AGENT_JAR}=${Object.entries(options).map(([key, value]) => `${key}=${value}`).join(',')}`;
}
