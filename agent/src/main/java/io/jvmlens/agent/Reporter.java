package io.jvmlens.agent;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The agent's one thread, a daemon: every flushMs it turns observations into batches and delivers
 * them in order, with a heartbeat when there is nothing else to say, and vm.stop at shutdown.
 * Everything slow (the vmId's SecureRandom, host name, JAR scanning, HTTP) happens here, never on
 * an application thread. The vm.start event rides in front of every request until the gateway has
 * accepted it, because the service rejects events of a vmId it does not know (decisions §4).
 */
final class Reporter implements Runnable {
    private static final long MAX_BACKOFF_MS = 30_000;
    private static final long MAX_OUTBOX_CHARS = 16L * 1024 * 1024;
    private static final int REQUEST_TIMEOUT_MS = 10_000;
    /** A 503 means the service is starting (decisions §3): only worth a log line when it lasts. */
    private static final long QUIET_503_MS = 30_000;
    private static final int MAX_SCAN_PROBLEMS = 5;

    private final AgentOptions options;
    private final List<String> problems;
    private final Observations observations;
    private final CodeTransformer transformer;
    private final long startTime;
    private final Outbox outbox;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile long stopTime;
    private volatile Thread thread;

    // Below: touched by the reporter thread only.
    private final Set<String> scannedJars = new HashSet<>();
    private final Set<String> sentComponents = new HashSet<>();
    private final List<ComponentScanner.Component> newComponents = new ArrayList<>();
    private String vmId;
    private Events events;
    private GatewayClient client;
    private String startEvent;
    private boolean startAccepted;
    private Path agentJar;
    private long nextAttempt;
    private int lastStatus;
    private long backoffMs;
    private long lastDelivery;
    private long failingSince = -1;
    private boolean outageLogged;
    private long droppedBeforeOutage;
    private long rejectedBatches;
    private int scanProblems;
    private long unreadableClasses;
    private String firstUnreadable;
    private boolean unreadableLogged;
    private boolean transformFailuresLogged;
    private boolean droppedClassesLogged;

    Reporter(AgentOptions options, List<String> problems, Observations observations, CodeTransformer transformer, long startTime) {
        this.options = options;
        this.problems = problems;
        this.observations = observations;
        this.transformer = transformer;
        this.startTime = startTime;
        this.outbox = new Outbox(options.maxBatches, MAX_OUTBOX_CHARS);
    }

    void start() {
        Thread reporter = new Thread(this, "jvmlens-agent");
        reporter.setDaemon(true);
        thread = reporter;
        reporter.start();
    }

    /** The JVM shutdown hook: asks for the final flush and waits for it, at most stopWaitMs. */
    Thread shutdownHook() {
        return new Thread(new ShutdownHook(this), "jvmlens-agent-shutdown");
    }

    private static final class ShutdownHook implements Runnable {
        private final Reporter reporter;

        ShutdownHook(Reporter reporter) {
            this.reporter = reporter;
        }

        @Override
        public void run() {
            try {
                reporter.shutdown();
            } catch (Throwable ignored) {
                // never delay or disturb the application's exit
            }
        }
    }

    void shutdown() throws InterruptedException {
        stopTime = System.currentTimeMillis();
        stopping = true;
        LockSupport.unpark(thread);
        if (!finished.await(options.stopWaitMs, TimeUnit.MILLISECONDS)) {
            AgentLog.line("exiting before the last events (and vm.stop) were delivered: stopWaitMs=" + options.stopWaitMs + " passed");
        }
    }

    @Override
    public void run() {
        try {
            initialise();
        } catch (Throwable failure) {
            AgentLog.line("not reporting: " + failure);
            finished.countDown();
            return;
        }
        // The first tick comes at once: the VM is registered while the application starts.
        while (!stopping) {
            try {
                tick(System.currentTimeMillis());
            } catch (Throwable failure) {
                AgentLog.line("reporting failed: " + failure);
            }
            LockSupport.parkNanos(this, options.flushMs * 1_000_000L);
        }
        try {
            finish();
        } catch (Throwable failure) {
            AgentLog.line("final report failed: " + failure);
        } finally {
            finished.countDown();
        }
    }

    private void initialise() throws IOException {
        vmId = VmIds.random();
        AgentLog.line("vmId=" + vmId + " gateway=" + options.gateway);
        Properties properties = System.getProperties();
        Map<String, String> environment = System.getenv();
        Map<String, String> tags = Tags.combine(environment.get(Tags.ENV), properties.getProperty(Tags.PROPERTY), options.tags, problems);
        for (String problem : problems) AgentLog.line(problem);
        String[] identity = identity();
        startEvent = VmStart.event(vmId, startTime, identity[0], identity[1], tags, options.sendEnvValues, properties, environment);
        client = new GatewayClient(options.eventsUrl(), options.apiKey, identity[0]);
        events = new Events(vmId);
        lastDelivery = startTime;
        agentJar = ownJar();
        String classPath = properties.getProperty("java.class.path", "");
        for (String entry : classPath.split(File.pathSeparator)) {
            if (!entry.isEmpty()) scanClassPathJar(Paths.get(entry), true);
        }
    }

    /** Agent version and revision, written into the JAR by agent/build.sh. */
    private static String[] identity() {
        Properties properties = new Properties();
        try (InputStream in = Reporter.class.getResourceAsStream("agent.properties")) {
            if (in != null) properties.load(in);
        } catch (IOException ignored) {
            // reported as unknown
        }
        return new String[] {properties.getProperty("version", "unknown"), properties.getProperty("revision", "unknown")};
    }

    private static Path ownJar() {
        try {
            return Paths.get(Reporter.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toRealPath();
        } catch (Exception | LinkageError e) {
            return null;
        }
    }

    /**
     * A JAR of the class path and, through its manifest's Class-Path, the JARs it names (as "java -jar"
     * does). The JDK turns class-path entries into code sources through File.getCanonicalFile()
     * (symbolic links resolved: Debian's spring3-core.jar loads as spring3-core-3.x.jar), while
     * manifest entries stay relative to their JAR; the sourceName here must be the code source's.
     */
    private void scanClassPathJar(Path path, boolean canonical) {
        Path jar = path.toAbsolutePath().normalize();
        if (canonical) {
            try {
                jar = jar.toRealPath();
            } catch (IOException | RuntimeException missing) {
                return; // a class path may name JARs that do not exist
            }
        }
        if (jar.equals(agentJar) || !scannedJars.add(jar.toString()) || !Files.isRegularFile(jar)) return;
        try {
            ComponentScanner.Scan scan = ComponentScanner.scanFile(jar, jar.getFileName().toString());
            addComponents(scan.components());
            for (String entry : scan.manifestClassPath()) {
                Path named = entry.startsWith("file:") ? ComponentScanner.filePath(entry) : jar.resolveSibling(CodeSources.decode(entry));
                if (named != null) scanClassPathJar(named, false);
            }
        } catch (IOException | RuntimeException e) {
            scanProblem(jar.toString(), e);
        }
    }

    /** A code source seen for the first time when a class loaded from it. */
    private void scanLocation(Observations.Location location) {
        String key = location.location;
        if (key.startsWith("file:")) {
            Path path = ComponentScanner.filePath(key);
            if (path == null) return;
            key = path.toAbsolutePath().normalize().toString();
        }
        if (!scannedJars.add(key)) return;
        try {
            ComponentScanner.Scan scan = ComponentScanner.scanLocation(location.location, location.sourceName);
            if (scan != null) addComponents(scan.components());
        } catch (IOException | RuntimeException e) {
            scanProblem(location.location, e);
        }
    }

    private void scanProblem(String where, Exception e) {
        if (scanProblems++ < MAX_SCAN_PROBLEMS) AgentLog.line("cannot read components of " + where + ": " + e);
    }

    private void addComponents(List<ComponentScanner.Component> components) {
        for (ComponentScanner.Component component : components) {
            String key = component.componentName() + '\u0000' + component.componentVersion() + '\u0000'
                    + component.groupId() + '\u0000' + component.sourceName();
            if (sentComponents.add(key)) newComponents.add(component);
        }
    }

    /** Moves everything observed so far into the outbox: components first, then code. */
    private void collect(long now) {
        for (Observations.Location location = observations.pollLocation(); location != null; location = observations.pollLocation()) {
            scanLocation(location);
        }
        List<Events.DeclaredMethods> classes = new ArrayList<>();
        for (Observations.LoadedClass loaded = observations.pollClass(); loaded != null; loaded = observations.pollClass()) {
            try {
                String[] methodNames = MethodNames.declaredIn(loaded.classFile);
                if (methodNames.length > 0) classes.add(new Events.DeclaredMethods(loaded.sourceName, loaded.className, methodNames));
            } catch (RuntimeException unreadable) {
                if (unreadableClasses++ == 0) firstUnreadable = loaded.className + ": " + unreadable;
            }
        }
        if (!newComponents.isEmpty()) {
            events.components(newComponents, now);
            newComponents.clear();
        }
        if (!classes.isEmpty()) events.code(classes, now);
        for (String batch : events.takeBatches()) outbox.add(batch);
        logAgentProblems();
    }

    private void tick(long now) {
        collect(now);
        if (outbox.isEmpty() && startAccepted && now - lastDelivery >= options.heartbeatMs) {
            outbox.add(Events.heartbeat(vmId, now));
        }
        if (now >= nextAttempt) deliver(Long.MAX_VALUE);
    }

    /**
     * At shutdown: everything still observed, then vm.stop, before the deadline. One attempt, unless
     * the service answers 503 (it is starting and will take the batch soon); an unreachable gateway
     * must not hold up every exit of the application for stopWaitMs.
     */
    private void finish() {
        long deadline = stopTime + options.stopWaitMs;
        collect(System.currentTimeMillis());
        outbox.add(Events.stop(vmId, stopTime));
        boolean delivered = deliver(deadline);
        for (long pause = 50; !delivered && lastStatus == 503; pause = Math.min(pause * 2, 1000)) {
            long remaining = deadline - System.currentTimeMillis();
            if (remaining <= pause) break;
            LockSupport.parkNanos(this, pause * 1_000_000L);
            delivered = deliver(deadline);
        }
        if (!delivered || outbox.dropped() > 0) {
            AgentLog.line("stopping with " + outbox.size() + " batch(es) undelivered and " + outbox.dropped()
                    + " dropped while " + options.eventsUrl() + " was unreachable");
        }
    }

    /** Sends the outbox in order until it is empty (true) or a request fails (false). */
    private boolean deliver(long deadline) {
        boolean retriedWithStart = false;
        while (true) {
            String batch = outbox.peek();
            if (batch == null && startAccepted) return true;
            long now = System.currentTimeMillis();
            if (now >= deadline) return false;
            boolean withStart = !startAccepted;
            GatewayClient.Result result = client.post(body(batch, withStart), (int) Math.min(REQUEST_TIMEOUT_MS, deadline - now));
            lastStatus = result.status;
            now = System.currentTimeMillis();
            switch (result.outcome) {
                case ACCEPTED:
                    startAccepted = true;
                    if (batch != null) outbox.removeFirst();
                    lastDelivery = now;
                    recovered();
                    retriedWithStart = false;
                    break;
                case REJECTED:
                    if (!withStart && !retriedWithStart) {
                        // The service may have lost this VM (a new data directory): introduce it again, once.
                        startAccepted = false;
                        retriedWithStart = true;
                        break;
                    }
                    rejected(result, batch != null);
                    if (withStart) {
                        // The vm.start event itself may be what the service refuses: do not hammer it.
                        failed(now, result);
                        return false;
                    }
                    break;
                default:
                    failed(now, result);
                    return false;
            }
        }
    }

    private String body(String batch, boolean withStart) {
        StringBuilder body = new StringBuilder((batch == null ? 0 : batch.length()) + (withStart ? startEvent.length() : 0) + 3);
        body.append('[');
        if (withStart) body.append(startEvent);
        if (withStart && batch != null) body.append(',');
        if (batch != null) body.append(batch);
        return body.append(']').toString();
    }

    private void rejected(GatewayClient.Result result, boolean dropBatch) {
        rejectedBatches++;
        if (dropBatch) outbox.removeFirst();
        AgentLog.line("gateway rejected a batch (HTTP " + result.status + "), " + rejectedBatches + " so far: " + result.message);
    }

    private void failed(long now, GatewayClient.Result result) {
        if (failingSince < 0) {
            failingSince = now;
            droppedBeforeOutage = outbox.dropped();
        }
        backoffMs = backoffMs == 0 ? options.flushMs : Math.min(backoffMs * 2, Math.max(MAX_BACKOFF_MS, options.flushMs));
        nextAttempt = now + backoffMs;
        boolean transient503 = result.status == 503 && now - failingSince < QUIET_503_MS;
        if (!outageLogged && !transient503 && result.outcome != GatewayClient.Outcome.REJECTED) {
            outageLogged = true;
            String why = result.status == 0 ? result.message : "HTTP " + result.status + " " + result.message;
            if (result.status == 401 || result.status == 403) why += " (check apiKey / JVMLENS_AGENT_API_KEY)";
            AgentLog.line("cannot deliver to " + options.eventsUrl() + ": " + why + "; retrying, keeping at most "
                    + options.maxBatches + " batches and dropping the oldest");
        }
    }

    private void recovered() {
        if (failingSince < 0) return;
        long dropped = outbox.dropped() - droppedBeforeOutage;
        if (outageLogged || dropped > 0) {
            AgentLog.line("delivering again to " + options.eventsUrl() + "; dropped " + dropped + " batch(es) meanwhile");
        }
        failingSince = -1;
        outageLogged = false;
        backoffMs = 0;
        nextAttempt = 0;
    }

    private void logAgentProblems() {
        if (!transformFailuresLogged && transformer.failures() > 0) {
            transformFailuresLogged = true;
            AgentLog.line("could not observe " + transformer.failures() + " class load(s); first: " + transformer.firstFailure());
        }
        if (!unreadableLogged && unreadableClasses > 0) {
            unreadableLogged = true;
            AgentLog.line("could not read " + unreadableClasses + " class file(s); first: " + firstUnreadable);
        }
        if (!droppedClassesLogged && observations.droppedClasses() > 0) {
            droppedClassesLogged = true;
            AgentLog.line("classes load faster than they can be reported; dropping class records");
        }
    }
}
