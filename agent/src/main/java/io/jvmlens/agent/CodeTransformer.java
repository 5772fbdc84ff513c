package io.jvmlens.agent;

import java.lang.instrument.ClassFileTransformer;
import java.net.URL;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sees every class the application loads, on the loading thread, and records its source and
 * declared methods. It never changes a class (always returns null) and never throws: a failure is
 * counted and reported later by the reporter thread, never on an application thread.
 */
final class CodeTransformer implements ClassFileTransformer {
    private static final String OWN_PACKAGE = "io/jvmlens/agent/";
    /** Bounds on the caches below, so generated classes or per-class URLs cannot grow them forever. */
    private static final int MAX_LOCATIONS = 10_000;
    private static final int MAX_SEEN_CLASSES = 1_000_000;
    /** Marks a location that names no application source (the JDK's jrt: modules). */
    private static final String IGNORED = "";

    private final Observations observations;
    private final ConcurrentHashMap<String, String> sourceNames = new ConcurrentHashMap<>();
    private final Set<String> seenClasses = ConcurrentHashMap.newKeySet();
    private final AtomicLong failures = new AtomicLong();
    private volatile String firstFailure;

    CodeTransformer(Observations observations) {
        this.observations = observations;
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

        String[] methodNames = methodNames(bytes);
        if (methodNames.length > 0) observations.classLoaded(new Observations.LoadedClass(sourceName, className, methodNames));
    }

    /** The methodNames a class file declares, in declaration order and without repeats. */
    static String[] methodNames(byte[] classFile) {
        List<ClassFileReader.MethodInfo> methods = ClassFileReader.methods(classFile);
        Set<String> names = new LinkedHashSet<>();
        for (ClassFileReader.MethodInfo method : methods) {
            // <clinit> and bridge methods are compiler plumbing, not methods the source declares;
            // bridges would also repeat a declared method's name with the erased parameter types.
            if (method.name().equals("<clinit>") || (method.access() & ClassFileReader.ACC_BRIDGE) != 0) continue;
            names.add(MethodNames.of(method.name(), method.descriptor()));
        }
        return names.toArray(new String[0]);
    }

    private String sourceName(String location) {
        String known = sourceNames.get(location);
        if (known != null) return known;
        String name = CodeSources.sourceName(location);
        if (name == null) name = IGNORED;
        if (sourceNames.size() < MAX_LOCATIONS) {
            String previous = sourceNames.putIfAbsent(location, name);
            if (previous != null) return previous;
        }
        if (!name.isEmpty()) observations.locationSeen(location, name);
        return name;
    }

    long failures() {
        return failures.get();
    }

    String firstFailure() {
        return firstFailure;
    }
}
