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
 * The VM's components, found once per JAR: at start the class path's (with the JARs their manifests'
 * Class-Path names) and the server lib directories'; then each JAR a class is first loaded from, and
 * with a webapp's first class every JAR of its WEB-INF/lib. A JAR no class loaded from is a component
 * all the same, which is how the service shows a vulnerable library as PRESENT. JARs are keyed by their
 * real path, size and modification time, so one reached by several names is scanned once, and one replaced
 * in place (a webapp redeployed) again; so are a webapp's WEB-INF/lib and a packed WAR. Each component is
 * reported once.
 * Used by the reporter thread only.
 */
final class JarComponents {
    private static final int MAX_LOGGED_PROBLEMS = 5;

    private final Path agentJar;
    private final JarAliases aliases;
    private final Set<String> scannedJars = new HashSet<>();
    private final Set<String> scannedWebapps = new HashSet<>();
    private final Set<String> reported = new HashSet<>();
    private final List<ComponentScanner.Component> found = new ArrayList<>();
    private final List<ComponentScanner.Component> all = new ArrayList<>();
    private int problems;

    /** agentJar: the agent's own JAR (on the class path with -javaagent), which is not a component of the application. */
    JarComponents(Path agentJar, JarAliases aliases) {
        this.agentJar = agentJar;
        this.aliases = aliases;
    }

    /** Every JAR of the server lib directories (Tomcat's lib), loaded from or not. */
    void scanLibraryDirectories() {
        for (Path directory : aliases.libraryDirectories()) {
            for (Path jar : JarAliases.jarsIn(directory)) scanJar(jar, jar.getFileName().toString());
        }
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
        String sourceName = jar.getFileName() == null ? "" : jar.getFileName().toString();
        if (canonical) {
            try {
                jar = jar.toRealPath();
            } catch (IOException | RuntimeException missing) {
                return; // a class path may name JARs that do not exist
            }
            sourceName = aliases.nameOfRealPath(jar);
        }
        ComponentScanner.Scan scan = scanJar(jar, sourceName);
        if (scan == null) return;
        for (String entry : scan.manifestClassPath()) {
            Path named = entry.startsWith("file:") ? ComponentScanner.filePath(entry) : jar.resolveSibling(CodeSources.decode(entry));
            if (named != null) scanClassPathJar(named, false);
        }
    }

    /** Scans a JAR file once (by its real path), under the given sourceName; null when seen before or unreadable. */
    private ComponentScanner.Scan scanJar(Path jar, String sourceName) {
        if (jar.equals(agentJar) || !scannedJars.add(fileKey(jar)) || !Files.isRegularFile(jar)) return null;
        try {
            ComponentScanner.Scan scan = ComponentScanner.scanFile(jar, sourceName);
            add(scan.components());
            return scan;
        } catch (IOException | RuntimeException e) {
            problem(jar.toString(), e);
            return null;
        }
    }

    /** A code source seen for the first time when a class loaded from it; directories have no components. */
    void scanLocation(Observations.Location location) {
        String key = location.location;
        if (key.startsWith("file:")) {
            Path path = ComponentScanner.filePath(key);
            if (path == null) return;
            key = fileKey(path);
        }
        if (scannedJars.add(key)) {
            try {
                ComponentScanner.Scan scan = ComponentScanner.scanLocation(location.location, location.sourceName);
                if (scan != null) add(scan.components());
            } catch (IOException | RuntimeException e) {
                problem(location.location, e);
            }
        }
        scanWebappLibraries(location.location);
    }

    /**
     * The first class of a webapp (from WEB-INF/classes or WEB-INF/lib) brings every JAR of its WEB-INF/lib,
     * whether Tomcat unpacked the WAR or runs it packed.
     */
    private void scanWebappLibraries(String location) {
        Path war = ComponentScanner.packedWar(location);
        if (war != null) {
            if (!scannedWebapps.add(fileKey(war))) return;
            try {
                add(ComponentScanner.scanWarLibraries(war));
            } catch (IOException | RuntimeException e) {
                problem(war.toString(), e);
            }
            return;
        }
        String path = location.startsWith("jar:") ? location.substring("jar:".length()) : location;
        int webInf = path.indexOf("/WEB-INF/");
        if (!path.startsWith("file:") || webInf < 0 || path.lastIndexOf("!/", webInf) >= 0) return;
        Path webapp = ComponentScanner.filePath(path.substring(0, webInf + 1));
        if (webapp == null) return;
        Path libraries = webapp.resolve("WEB-INF").resolve("lib");
        if (!scannedWebapps.add(fileKey(libraries))) return;
        for (Path jar : JarAliases.jarsIn(libraries)) scanJar(jar, jar.getFileName().toString());
    }

    /** What tells a file (or directory) from the one seen before at its path: real path, size, modification time. */
    private static String fileKey(Path path) {
        Path real = realPath(path);
        try {
            return real + " " + Files.size(real) + " " + Files.getLastModifiedTime(real).toMillis();
        } catch (IOException | RuntimeException e) {
            return real.toString();
        }
    }

    private static Path realPath(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException | RuntimeException e) {
            return path.toAbsolutePath().normalize();
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
