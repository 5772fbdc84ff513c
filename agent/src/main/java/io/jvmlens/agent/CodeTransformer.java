package io.jvmlens.agent;

import io.jvmlens.probe.FirstCalls;
import java.lang.instrument.ClassFileTransformer;
import java.lang.ref.WeakReference;
import java.net.URL;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sees every class the application loads, on the loading thread. With methods=loaded it queues the
 * class's source and class-file bytes for the reporter thread, which reads the declared methods (and
 * drops a class it already saw from the same source), so the loading thread pays for a queue insert and,
 * when the class comes from another JAR than the last one, a map lookup; it never changes a class. With methods=called it
 * puts a probe at the entry of each method (MethodProbes) and registers the class's methods; a class it
 * cannot rewrite is left as it is, and one whose loader or module cannot reach the probe is queued as with methods=loaded. It never throws: a failure is counted and reported by the reporter thread.
 */
final class CodeTransformer implements ClassFileTransformer {
    private static final String OWN_PACKAGE = "io/jvmlens/agent/";
    /** Bounds on the caches below, so generated classes or per-class URLs cannot grow them forever. */
    private static final int MAX_LOCATIONS = 10_000;
    /** Marks a location that names no application source (the JDK's jrt: modules). */
    private static final String IGNORED = "";

    private final Observations observations;
    private final JarAliases aliases;
    /** Non-null with methods=called. */
    private final CalledMethods calledMethods;
    private final CalledMethods.Ids ids = new CalledMethods.Ids();
    private final AtomicLong unprobedMethods = new AtomicLong();
    private volatile String firstUnprobed;
    /** Per class loader, whether it resolves FirstCalls to the agent's; weak, so loaders can still be collected. */
    private final Map<ClassLoader, Boolean> probeVisible = Collections.synchronizedMap(new WeakHashMap<>());
    private final AtomicLong unprobedClasses = new AtomicLong();
    private volatile String firstUnprobedClass;
    private final ConcurrentHashMap<String, String> sourceNames = new ConcurrentHashMap<>();
    /**
     * The protection domain of the last class seen and its sourceName: classes load in runs from one JAR,
     * and the lookup otherwise builds the location's String each time. Weak, so it never keeps a loader alive.
     */
    private volatile LastDomain lastDomain = new LastDomain(new WeakReference<>(null), IGNORED);

    private record LastDomain(WeakReference<ProtectionDomain> domain, String sourceName) {}
    private final AtomicLong failures = new AtomicLong();
    /** Every class the JVM showed the transformer: the reporter waits while it grows fast (the application's start). */
    private final AtomicLong classesSeen = new AtomicLong();
    private volatile String firstFailure;

    CodeTransformer(Observations observations, JarAliases aliases, CalledMethods calledMethods) {
        this.observations = observations;
        this.aliases = aliases;
        this.calledMethods = calledMethods;
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String className, Class<?> classBeingRedefined,
                            ProtectionDomain protectionDomain, byte[] classfileBuffer) {
        classesSeen.incrementAndGet();
        try {
            return observe(module, loader, className, classBeingRedefined, protectionDomain, classfileBuffer);
        } catch (Throwable failure) {
            if (failures.getAndIncrement() == 0) firstFailure = className + ": " + failure;
            return null;
        }
    }

    /** The class's new bytes (methods=called), or null to leave it as it is. */
    private byte[] observe(Module module, ClassLoader loader, String className, Class<?> classBeingRedefined, ProtectionDomain protectionDomain, byte[] bytes) {
        // Redefinitions are classes already seen; no code source means the JDK's bootstrap classes.
        if (className == null || classBeingRedefined != null || protectionDomain == null || bytes == null) return null;
        if (className.startsWith(OWN_PACKAGE) || className.equals("module-info")) return null;
        String sourceName = sourceNameOf(protectionDomain);
        if (sourceName.isEmpty()) return null;
        // Each definition of a class gets its probes: the reporter sends a method's first call once per copy.
        if (calledMethods != null && probeable(module, loader, className)) return probe(sourceName, className, bytes);
        // A class that cannot reach the probe is reported as methods=loaded reports it: unreported, its JAR would
        // look unused (a CVE PRESENT, not USED) while its code runs.
        observations.classLoaded(new Observations.LoadedClass(sourceName, className, bytes));
        return null;
    }

    /** The sourceName of a protection domain's code source; empty when it names no application source. */
    private String sourceNameOf(ProtectionDomain domain) {
        LastDomain last = lastDomain;
        if (last.domain().get() == domain) return last.sourceName();
        CodeSource codeSource = domain.getCodeSource();
        URL url = codeSource == null ? null : codeSource.getLocation();
        String sourceName = url == null ? IGNORED : sourceName(url.toString(), domain.getClassLoader());
        lastDomain = new LastDomain(new WeakReference<>(domain), sourceName);
        return sourceName;
    }

    /**
     * Whether the class's code can call FirstCalls (in the agent's JAR, on the application class path): its
     * loader must resolve that name to the same class, which an isolated loader or an OSGi bundle's does not,
     * and it must not be in a named module (which does not read the class path's unnamed module). Asked once
     * per loader. Other classes keep their code, counted.
     */
    private boolean probeable(Module module, ClassLoader loader, String className) {
        boolean visible = false;
        if (loader != null && (module == null || !module.isNamed())) {
            Boolean known = probeVisible.get(loader);
            if (known == null) {
                try {
                    known = Class.forName(FirstCalls.class.getName(), false, loader) == FirstCalls.class;
                } catch (Throwable invisible) {
                    known = false;
                }
                probeVisible.put(loader, known);
            }
            visible = known;
        }
        if (!visible && unprobedClasses.getAndIncrement() == 0) firstUnprobedClass = className;
        return visible;
    }

    private byte[] probe(String sourceName, String className, byte[] bytes) {
        MethodProbes.Result result = MethodProbes.rewrite(bytes, ids);
        if (result == null) return null;
        if (result.skipped() > 0 && unprobedMethods.getAndAdd(result.skipped()) == 0) firstUnprobed = className;
        calledMethods.register(new CalledMethods.ProbedClass(sourceName, className, result));
        return result.bytes();
    }

    /**
     * A webapp's locations are keyed by their class loader as well: redeployed in place, it has a new loader and
     * the same locations, whose JARs the reporter must look at again. Other locations are not: loaders that come
     * and go with one location (a JSP's, a script's) would fill the map.
     */
    private String sourceName(String location, ClassLoader loader) {
        String key = location.contains("/WEB-INF/") ? System.identityHashCode(loader) + " " + location : location;
        String known = sourceNames.get(key);
        if (known != null) return known;
        String name = CodeSources.sourceName(location);
        if (name == null) {
            name = IGNORED;
        } else {
            String alias = aliases.nameOf(location);
            if (alias != null) name = alias;
        }
        // Only a location entered in the map is announced, so each is scanned once and, past
        // MAX_LOCATIONS, the queue of locations cannot grow either.
        if (sourceNames.size() < MAX_LOCATIONS) {
            String previous = sourceNames.putIfAbsent(key, name);
            if (previous != null) return previous;
            if (!name.isEmpty()) observations.locationSeen(location, name);
        }
        return name;
    }

    long classesSeen() {
        return classesSeen.get();
    }

    long failures() {
        return failures.get();
    }

    String firstFailure() {
        return firstFailure;
    }

    /** Methods left without a probe (type annotations in their code, or no room under the 64 KiB limit). */
    long unprobedMethods() {
        return unprobedMethods.get();
    }

    String firstUnprobed() {
        return firstUnprobed;
    }

    /** Classes left without probes: their loader does not reach the application class loader, or a named module. */
    long unprobedClasses() {
        return unprobedClasses.get();
    }

    String firstUnprobedClass() {
        return firstUnprobedClass;
    }
}
