package io.jvmlens.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarInputStream;
import java.util.jar.Manifest;

/**
 * Finds the components of one JAR (decisions §4), each with the identity a vulnerability database can
 * match, in this order:
 * 1. each META-INF/maven/**&#47;pom.properties names one (a shaded JAR holds several);
 * 2. else the OSGi Bundle-SymbolicName and Bundle-Version: "org.apache.tomcat-catalina" is
 *    org.apache.tomcat:tomcat-catalina (Debian's and Eclipse's JARs carry no pom.properties);
 * 3. else the Automatic-Module-Name (a name only);
 * 4. else the manifest's Implementation-Title;
 * 5. else the name of the real file (Debian's unversioned symlinks point at versioned files), then the
 *    name the JVM opened ("foo-1.2.3.jar" is foo 1.2.3).
 * Without a version of its own, a component takes Bundle-Version, Implementation-Version or the real
 * file name's. A version nobody states is "UNKNOWN". Every component carries the JAR's sourceName.
 */
final class ComponentScanner {
    static final String UNKNOWN = "UNKNOWN";
    private static final String WAR_LIBRARIES = "WEB-INF/lib/";

    /** One component as the components event carries it; groupId is null when unknown. */
    record Component(String componentName, String componentVersion, String sourceName, String groupId) {}

    /** What a JAR says about itself: its components and the Class-Path entries of its manifest. */
    record Scan(List<Component> components, List<String> manifestClassPath) {}

    private ComponentScanner() {}

    /** Scans a JAR on disk. */
    static Scan scanFile(Path jar, String sourceName) throws IOException {
        try (JarFile file = new JarFile(jar.toFile(), false)) {
            List<Properties> poms = new ArrayList<>();
            Enumeration<JarEntry> entries = file.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                if (isPomProperties(entry.getName())) {
                    try (InputStream in = file.getInputStream(entry)) {
                        poms.add(load(in));
                    }
                }
            }
            Manifest manifest = file.getManifest();
            return new Scan(components(poms, manifest, sourceName, realName(jar)), classPath(manifest));
        }
    }

    /** Scans a JAR held inside another archive, read as a stream (Spring Boot's BOOT-INF/lib). */
    static Scan scanStream(InputStream jar, String sourceName) throws IOException {
        try (JarInputStream in = new JarInputStream(jar, false)) {
            List<Properties> poms = new ArrayList<>();
            for (JarEntry entry = in.getNextJarEntry(); entry != null; entry = in.getNextJarEntry()) {
                if (isPomProperties(entry.getName())) poms.add(load(in));
            }
            return new Scan(components(poms, in.getManifest(), sourceName, null), List.of());
        }
    }

    /**
     * Scans the archive at a code-source location: a JAR file, or a JAR nested in one
     * ("jar:file:/app.jar!/BOOT-INF/lib/x.jar!/", Spring Boot 3.2+ "jar:nested:/app.jar/!BOOT-INF/lib/x.jar!/",
     * Tomcat's packed WAR "war:file:/webapps/shop.war*&#47;WEB-INF/lib/x.jar").
     * Null for a directory or a location it cannot read as a JAR.
     */
    static Scan scanLocation(String location, String sourceName) throws IOException {
        if (location.startsWith("file:")) {
            Path path = filePath(location);
            return path != null && Files.isRegularFile(path) ? scanFile(path, sourceName) : null;
        }
        Path outerPath;
        String inner;
        Path war = packedWar(location);
        if (war != null) {
            outerPath = war;
            inner = location.substring(warSeparator(location) + 2);
        } else if (location.startsWith("jar:nested:")) {
            int separator = location.indexOf("/!");
            if (separator < 0) return null;
            outerPath = filePath("file:" + location.substring("jar:nested:".length(), separator));
            inner = location.substring(separator + 2);
        } else if (location.startsWith("jar:file:")) {
            int separator = location.indexOf("!/");
            if (separator < 0) return null;
            outerPath = filePath(location.substring("jar:".length(), separator));
            inner = location.substring(separator + 2);
        } else {
            return null;
        }
        int end = inner.indexOf("!/");
        if (end >= 0) inner = inner.substring(0, end);
        while (inner.endsWith("/")) inner = inner.substring(0, inner.length() - 1);
        if (outerPath == null || !Files.isRegularFile(outerPath)) return null;
        if (inner.isEmpty() || !CodeSources.isArchive(inner)) {
            // Classes in a directory of an archive (BOOT-INF/classes) belong to the archive itself.
            return scanFile(outerPath, sourceName);
        }
        try (JarFile file = new JarFile(outerPath.toFile(), false)) {
            JarEntry entry = file.getJarEntry(CodeSources.decode(inner));
            if (entry == null) return null;
            try (InputStream in = file.getInputStream(entry)) {
                return scanStream(in, sourceName);
            }
        }
    }

    /**
     * The WAR file of a location inside a packed webapp, or null: Tomcat (unpackWARs="false") names a JAR of
     * its WEB-INF/lib "war:file:/webapps/shop.war*&#47;WEB-INF/lib/x.jar" ('^' in place of '*' in old
     * versions), and its WEB-INF/classes "file:/webapps/shop.war".
     */
    static Path packedWar(String location) {
        String path = location.startsWith("jar:") ? location.substring("jar:".length()) : location;
        if (path.startsWith("war:file:")) {
            int separator = warSeparator(path);
            return separator < 0 ? null : filePath(path.substring("war:".length(), separator));
        }
        if (!path.startsWith("file:") || !path.toLowerCase(Locale.ROOT).endsWith(".war")) return null;
        Path war = filePath(path);
        return war != null && Files.isRegularFile(war) ? war : null;
    }

    private static int warSeparator(String location) {
        int separator = location.indexOf("*/");
        return separator >= 0 ? separator : location.indexOf("^/");
    }

    /** Every JAR directly in a packed WAR's WEB-INF/lib, each under its file name, the sourceName its classes carry. */
    static List<Component> scanWarLibraries(Path war) throws IOException {
        List<Component> found = new ArrayList<>();
        try (JarFile file = new JarFile(war.toFile(), false)) {
            Enumeration<JarEntry> entries = file.entries();
            while (entries.hasMoreElements()) {
                String name = entries.nextElement().getName();
                if (!name.startsWith(WAR_LIBRARIES)) continue;
                String fileName = name.substring(WAR_LIBRARIES.length());
                if (fileName.indexOf('/') >= 0 || !fileName.toLowerCase(Locale.ROOT).endsWith(".jar")) continue;
                try (InputStream in = file.getInputStream(file.getJarEntry(name))) {
                    found.addAll(scanStream(in, fileName).components());
                }
            }
        }
        return found;
    }

    /** The local path of a file: URL, or null when it is not one. */
    static Path filePath(String location) {
        try {
            return Paths.get(new URI(location));
        } catch (Exception notAnEncodedUri) {
            // Some class loaders hand out file: URLs with raw spaces; decode by hand.
            String path = location.substring("file:".length());
            while (path.startsWith("//")) path = path.substring(1);
            try {
                return Paths.get(CodeSources.decode(path));
            } catch (RuntimeException e) {
                return null;
            }
        }
    }

    static boolean isPomProperties(String entryName) {
        return entryName.startsWith("META-INF/maven/") && entryName.endsWith("/pom.properties");
    }

    /** The file name behind any symbolic links, or null when it cannot be resolved. */
    static String realName(Path jar) {
        try {
            Path real = jar.toRealPath().getFileName();
            return real == null ? null : real.toString();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** realName: the file's name behind symbolic links (null when the same or unknown). */
    static List<Component> components(List<Properties> poms, Manifest manifest, String sourceName, String realName) {
        List<Component> found = new ArrayList<>();
        for (Properties pom : poms) {
            String artifactId = trimmed(pom.getProperty("artifactId"));
            if (artifactId == null) continue;
            String version = trimmed(pom.getProperty("version"));
            found.add(new Component(artifactId, version == null ? UNKNOWN : version, sourceName, trimmed(pom.getProperty("groupId"))));
        }
        if (!found.isEmpty()) return found;
        Attributes attributes = manifest == null ? null : manifest.getMainAttributes();
        String title = attribute(attributes, "Implementation-Title");
        Component named = realName == null || realName.equals(sourceName) ? null : fromFileName(realName);
        String version = attribute(attributes, "Bundle-Version");
        if (version == null) version = attribute(attributes, "Implementation-Version");
        if (version == null && named != null && !named.componentVersion().equals(UNKNOWN)) version = named.componentVersion();
        String symbolicName = attribute(attributes, "Bundle-SymbolicName");
        if (symbolicName != null) {
            // Directives follow a ';' ("org.eclipse.jdt.core;singleton:=true").
            int directives = symbolicName.indexOf(';');
            if (directives >= 0) symbolicName = symbolicName.substring(0, directives).trim();
            String[] coordinates = mavenCoordinates(symbolicName);
            found.add(new Component(coordinates[1], version == null ? UNKNOWN : version, sourceName, coordinates[0]));
            return found;
        }
        String module = attribute(attributes, "Automatic-Module-Name");
        if (module == null) module = title;
        if (module != null) {
            found.add(new Component(module, version == null ? UNKNOWN : version, sourceName, null));
            return found;
        }
        Component fromName = named != null ? new Component(named.componentName(), named.componentVersion(), sourceName, null) : fromFileName(sourceName);
        if (fromName.componentVersion().equals(UNKNOWN) && version != null) {
            fromName = new Component(fromName.componentName(), version, sourceName, null);
        }
        found.add(fromName);
        return found;
    }

    /**
     * Maven groupId and artifactId of an OSGi symbolic name, by the conventions bundles follow:
     * "org.apache.tomcat-catalina" is org.apache.tomcat:tomcat-catalina (the artifact repeats the group's
     * last segment), "org.eclipse.jdt.core" is org.eclipse.jdt:org.eclipse.jdt.core.
     */
    static String[] mavenCoordinates(String symbolicName) {
        int dash = symbolicName.indexOf('-');
        if (dash > 0) {
            String group = symbolicName.substring(0, dash);
            String last = group.substring(group.lastIndexOf('.') + 1);
            return new String[] {group, last + symbolicName.substring(dash)};
        }
        int dot = symbolicName.lastIndexOf('.');
        return new String[] {dot > 0 ? symbolicName.substring(0, dot) : null, symbolicName};
    }

    private static String attribute(Attributes attributes, String name) {
        return attributes == null ? null : trimmed(attributes.getValue(name));
    }

    /** "foo-bar-1.2.3-jre.jar" is foo-bar 1.2.3-jre: the version starts at the first "-digit". */
    static Component fromFileName(String sourceName) {
        String base = sourceName;
        if (CodeSources.isArchive(base)) base = base.substring(0, base.length() - 4);
        for (int dash = base.indexOf('-'); dash >= 0; dash = base.indexOf('-', dash + 1)) {
            if (dash > 0 && dash + 1 < base.length() && Character.isDigit(base.charAt(dash + 1))) {
                return new Component(base.substring(0, dash), base.substring(dash + 1), sourceName, null);
            }
        }
        return new Component(base, UNKNOWN, sourceName, null);
    }

    private static List<String> classPath(Manifest manifest) {
        String value = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
        List<String> entries = new ArrayList<>();
        if (value == null) return entries;
        // Entries are separated by spaces (JAR File Specification); no regex, to load no regex classes.
        for (String entry : value.replace('\t', ' ').split(" ")) {
            if (!entry.isEmpty()) entries.add(entry);
        }
        return entries;
    }

    private static Properties load(InputStream in) throws IOException {
        Properties properties = new Properties();
        properties.load(in);
        return properties;
    }

    private static String trimmed(String value) {
        if (value == null) return null;
        String trimmed = value.trim();
        return trimmed.isEmpty() ? null : trimmed;
    }
}
