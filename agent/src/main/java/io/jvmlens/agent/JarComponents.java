package io.jvmlens.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The VM's components, found once per JAR: the class path's at start (with the JARs their manifests'
 * Class-Path names), then each JAR a class is first loaded from. Each component is reported once.
 * Used by the reporter thread only.
 */
final class JarComponents {
    private static final int MAX_LOGGED_PROBLEMS = 5;

    private final Path agentJar;
    private final Set<String> scannedJars = new HashSet<>();
    private final Set<String> reported = new HashSet<>();
    private final List<ComponentScanner.Component> found = new ArrayList<>();
    private final List<ComponentScanner.Component> all = new ArrayList<>();
    private int problems;

    /** agentJar: the agent's own JAR (on the class path with -javaagent), which is not a component of the application. */
    JarComponents(Path agentJar) {
        this.agentJar = agentJar;
    }

    void scanClassPath(String classPath, String separator) {
        for (String entry : classPath.split(separator)) {
            if (!entry.isEmpty()) scanClassPathJar(Paths.get(entry), true);
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
            add(scan.components());
            for (String entry : scan.manifestClassPath()) {
                Path named = entry.startsWith("file:") ? ComponentScanner.filePath(entry) : jar.resolveSibling(CodeSources.decode(entry));
                if (named != null) scanClassPathJar(named, false);
            }
        } catch (IOException | RuntimeException e) {
            problem(jar.toString(), e);
        }
    }

    /** A code source seen for the first time when a class loaded from it; directories have no components. */
    void scanLocation(Observations.Location location) {
        String key = location.location;
        if (key.startsWith("file:")) {
            Path path = ComponentScanner.filePath(key);
            if (path == null) return;
            key = path.toAbsolutePath().normalize().toString();
        }
        if (!scannedJars.add(key)) return;
        try {
            ComponentScanner.Scan scan = ComponentScanner.scanLocation(location.location, location.sourceName);
            if (scan != null) add(scan.components());
        } catch (IOException | RuntimeException e) {
            problem(location.location, e);
        }
    }

    /** Components found since the last call, each only once over the VM's life. */
    List<ComponentScanner.Component> takeNew() {
        List<ComponentScanner.Component> taken = new ArrayList<>(found);
        found.clear();
        return taken;
    }

    private void add(List<ComponentScanner.Component> components) {
        for (ComponentScanner.Component component : components) {
            String key = component.componentName() + '\u0000' + component.componentVersion() + '\u0000'
                    + component.groupId() + '\u0000' + component.sourceName();
            if (reported.add(key)) {
                found.add(component);
                all.add(component);
            }
        }
    }

    /** Every component found so far: for a service that lost the VM and must hear of them again. */
    List<ComponentScanner.Component> all() {
        return new ArrayList<>(all);
    }

    private void problem(String where, Exception e) {
        if (problems++ < MAX_LOGGED_PROBLEMS) AgentLog.line("cannot read components of " + where + ": " + e);
    }
}
