package io.jvmlens.agent;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
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
 * The agent's one thread, a daemon: every flushMs it turns observations into batches and hands
 * them to Delivery, with a heartbeat when there is nothing else to say, and vm.stop at shutdown.
 * Everything slow (host name, JAR scanning, reading class files, JSON, HTTP) happens here, never on
 * an application thread.
 */
final class Reporter implements Runnable {
    private final AgentOptions options;
    private final List<String> problems;
    private final Observations observations;
    private final CodeTransformer transformer;
    private final JarAliases aliases;
    /** Non-null with methods=called. */
    private final CalledMethods calledMethods;
    private final long startTime;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile long stopTime;
    private volatile Thread thread;

    /** The application's class loading counts as quiet below QUIET_CLASSES per QUIET_CHECK_MS (1,000 a second). */
    private static final long QUIET_CHECK_MS = 50;
    private static final long QUIET_CLASSES = 50;
    private static final long MAX_START_DELAY_MS = 2_000;
    /** Bounds seenClasses, so generated classes cannot grow it forever. */
    private static final int MAX_SEEN_CLASSES = 1_000_000;

    // Below: touched by the reporter thread only.
    /** sourceName NUL className of every class reported: a class defined by several loaders is one code record. */
    private final Set<String> seenClasses = new HashSet<>();
    private String vmId;
    private Events events;
    private Delivery delivery;
    private JarComponents components;
    private ReportedCode reportedCode;
    private long unreadableClasses;
    private String firstUnreadable;
    private boolean unreadableLogged;
    private boolean transformFailuresLogged;
    private boolean droppedClassesLogged;
    private boolean unprobedLogged;
    private boolean unprobedClassesLogged;

    Reporter(AgentOptions options, List<String> problems, Observations observations, CodeTransformer transformer, JarAliases aliases, CalledMethods calledMethods, long startTime) {
        this.options = options;
        this.problems = problems;
        this.observations = observations;
        this.transformer = transformer;
        this.aliases = aliases;
        this.calledMethods = calledMethods;
        this.startTime = startTime;
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
        awaitQuietStart();
        try {
            initialise();
        } catch (Throwable failure) {
            AgentLog.line("not reporting: " + failure);
            finished.countDown();
            return;
        }
        // The first tick comes at once: the VM is registered as soon as the application's start allows.
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

    /**
     * Waits, at most MAX_START_DELAY_MS, while the application loads classes in a burst (its start), so that
     * the agent's own start (vm.start, scanning JARs, the first connection: some 60 ms of CPU) does not
     * compete with it for the cores: on 2 cores it made a 20,000-class start 10% slower. At the JVM's exit
     * it stops waiting at once.
     */
    private void awaitQuietStart() {
        long deadline = System.currentTimeMillis() + MAX_START_DELAY_MS;
        long seen = transformer.classesSeen();
        while (!stopping && System.currentTimeMillis() < deadline) {
            LockSupport.parkNanos(this, QUIET_CHECK_MS * 1_000_000L);
            long now = transformer.classesSeen();
            if (now - seen < QUIET_CLASSES) return;
            seen = now;
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
        byte[] startEvent = VmStart.event(vmId, startTime, identity[0], identity[1], tags, options.sendEnvValues, properties, environment);
        delivery = new Delivery(options, new GatewayClient(options.eventsUrl(), options.apiKey, identity[0]), startEvent, startTime, this::reintroduce);
        events = new Events(vmId);
        components = new JarComponents(ownJar(), aliases);
        reportedCode = new ReportedCode(options.codeRefreshMs, startTime);
        components.scanClassPath(properties.getProperty("java.class.path", ""), File.pathSeparator);
        components.scanLibraryDirectories();
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

    private void tick(long now) throws IOException {
        collect(now);
        if (delivery.idle(now, options.heartbeatMs)) delivery.add(Events.heartbeat(vmId, now));
        delivery.deliverIfDue(now);
    }

    /** At shutdown: everything still observed, then vm.stop, delivered before stopWaitMs runs out. */
    private void finish() throws IOException {
        collect(System.currentTimeMillis());
        delivery.addKept(Events.stop(vmId, stopTime));
        delivery.deliverBefore(stopTime + options.stopWaitMs);
    }

    /** Turns everything observed so far into batches: components first, then code, then code reported again. */
    private void collect(long now) throws IOException {
        for (Observations.Location location = observations.pollLocation(); location != null; location = observations.pollLocation()) {
            components.scanLocation(location);
        }
        List<CalledMethods.Call> calls = calledMethods == null ? List.of() : calledMethods.takeNewCalls();
        List<Events.DeclaredMethods> classes = new ArrayList<>();
        for (Observations.LoadedClass loaded = observations.pollClass(); loaded != null; loaded = observations.pollClass()) {
            String key = loaded.sourceName + '\u0000' + loaded.className;
            if (seenClasses.size() < MAX_SEEN_CLASSES ? !seenClasses.add(key) : seenClasses.contains(key)) continue;
            try {
                String[] methodNames = MethodNames.declaredIn(loaded.classFile);
                if (methodNames.length > 0) classes.add(new Events.DeclaredMethods(loaded.sourceName, loaded.className, methodNames));
            } catch (RuntimeException unreadable) {
                if (unreadableClasses++ == 0) firstUnreadable = loaded.className + ": " + unreadable;
            }
        }
        List<ComponentScanner.Component> found = components.takeNew();
        if (!found.isEmpty()) {
            // Components in batches of their own, which an outage never drops; code may be dropped.
            events.components(found, now);
            for (byte[] batch : events.takeBatches()) delivery.addKept(batch);
        }
        if (!classes.isEmpty()) events.code(classes, now);
        if (!calls.isEmpty()) events.calls(calls);
        List<Events.DeclaredMethods> again = reportedCode.due(now);
        if (!again.isEmpty()) events.code(again, now);
        reportedCode.add(classes);
        reportedCode.addCalls(calls);
        for (byte[] batch : events.takeBatches()) delivery.add(batch);
        logAgentProblems();
    }

    /** The service no longer knows this VM (it lost its data): every component goes again after the vm.start. */
    private void reintroduce() {
        List<ComponentScanner.Component> all = components.all();
        if (all.isEmpty()) return;
        events.components(all, System.currentTimeMillis());
        for (byte[] batch : events.takeBatches()) delivery.addKept(batch);
    }

    private void logAgentProblems() {
        if (!transformFailuresLogged && transformer.failures() > 0) {
            transformFailuresLogged = true;
            AgentLog.line("could not observe " + transformer.failures() + " class load(s); first: " + transformer.firstFailure());
        }
        if (!unprobedClassesLogged && transformer.unprobedClasses() > 0) {
            unprobedClassesLogged = true;
            AgentLog.line("left " + transformer.unprobedClasses() + " class(es) without probes (a class loader that does not delegate to the application class loader, or a named module): reported with every declared method, as methods=loaded does; first: " + transformer.firstUnprobedClass());
        }
        if (!unprobedLogged && transformer.unprobedMethods() > 0) {
            unprobedLogged = true;
            AgentLog.line("left " + transformer.unprobedMethods() + " method(s) without a probe (type annotations in their code, or too long), their first calls go unreported; first in " + transformer.firstUnprobed());
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
