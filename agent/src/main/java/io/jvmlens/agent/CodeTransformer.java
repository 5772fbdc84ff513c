package io.jvmlens.agent;

import java.lang.instrument.ClassFileTransformer;
import java.net.URL;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sees every class the application loads, on the loading thread, and queues its source and
 * class-file bytes for the reporter thread, which reads the declared methods; the loading thread
 * pays for a few map lookups only. It never changes a class (always returns null) and never
 * throws: a failure is counted and reported later by the reporter thread.
 */
final class CodeTransformer implements ClassFileTransformer {
    private static final String OWN_PACKAGE = "io/jvmlens/agent/";
    /** Bounds on the caches below, so generated classes or per-class URLs cannot grow them forever. */
    private static final int MAX_LOCATIONS = 10_000;
    private static final int MAX_SEEN_CLASSES = 1_000_000;
    /** Marks a location that names no application source (the JDK's jrt: modules). */
    private static final String IGNORED = "";

    private final Observations observations;
    private final JarAliases aliases;
    private final ConcurrentHashMap<String, String> sourceNames = new ConcurrentHashMap<>();
    private final Set<String> seenClasses = ConcurrentHashMap.newKeySet();
    private final AtomicLong failures = new AtomicLong();
    private volatile String firstFailure;

    CodeTransformer(Observations observations, JarAliases aliases) {
        this.observations = observations;
        this.aliases = aliases;
    }

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> classBeingRedefined,
                            ProtectionDomain protectionDomain, byte[] classfileBuffer) {
        try {
            observe(className, classBeingRedefined, protectionDomain, classfileBuffer);
        } catch (Throwable failure) {
            if (failures.getAndIncrement() == 0) firstFailure = className + ": " + failure;
        }
        return null;
    }

    private void observe(String className, Class<?> classBeingRedefined, ProtectionDomain protectionDomain, byte[] bytes) {
        // Redefinitions are classes already seen; no code source means the JDK's bootstrap classes.
        if (className == null || classBeingRedefined != null || protectionDomain == null || bytes == null) return;
        if (className.startsWith(OWN_PACKAGE) || className.equals("module-info")) return;
        CodeSource codeSource = protectionDomain.getCodeSource();
        URL url = codeSource == null ? null : codeSource.getLocation();
        if (url == null) return;
        String sourceName = sourceName(url.toString());
        if (sourceName.isEmpty()) return;
        // De-duplicate per (sourceName, className): a class defined by several loaders is one code record.
        String key = sourceName + '\u0000' + className;
        if (seenClasses.size() < MAX_SEEN_CLASSES ? !seenClasses.add(key) : seenClasses.contains(key)) return;

        observations.classLoaded(new Observations.LoadedClass(sourceName, className, bytes));
    }

    private String sourceName(String location) {
        String known = sourceNames.get(location);
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
            String previous = sourceNames.putIfAbsent(location, name);
            if (previous != null) return previous;
            if (!name.isEmpty()) observations.locationSeen(location, name);
        }
        return name;
    }

    long failures() {
        return failures.get();
    }

    String firstFailure() {
        return firstFailure;
    }
}
