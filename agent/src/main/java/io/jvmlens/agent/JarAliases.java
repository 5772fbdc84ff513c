package io.jvmlens.agent;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The names users gave the JARs the JVM opens by their real path. The JDK and Tomcat resolve symbolic
 * links before they load a class (Debian's lib/catalina.jar loads from tomcat10-catalina-10.1.60.jar),
 * yet the user looks for the name on the class path or in the server's lib directory. Built once in
 * premain (a directory listing and a path resolution per JAR, no JAR is opened) and read-only after.
 */
final class JarAliases {
    /** Bounds the JARs taken from one lib directory, so a directory such as /usr/share/java stays cheap. */
    static final int MAX_JARS_PER_DIRECTORY = 2_000;

    private final Map<String, String> byRealPath;
    private final List<Path> libraryDirectories;

    private JarAliases(Map<String, String> byRealPath, List<Path> libraryDirectories) {
        this.byRealPath = byRealPath;
        this.libraryDirectories = libraryDirectories;
    }

    /**
     * From the class path and the server lib directories: Tomcat's ${catalina.base}/lib and
     * ${catalina.home}/lib when those properties are set, and the libDirs option's.
     */
    static JarAliases find(Properties properties, String libDirsOption) {
        Set<Path> directories = new LinkedHashSet<>();
        for (String home : new String[] {properties.getProperty("catalina.base"), properties.getProperty("catalina.home")}) {
            if (home != null && !home.isEmpty()) addDirectory(directories, Paths.get(home, "lib"));
        }
        if (libDirsOption != null) {
            for (String dir : libDirsOption.split(File.pathSeparator)) {
                if (!dir.isEmpty()) addDirectory(directories, Paths.get(dir));
            }
        }
        Map<String, String> byRealPath = new HashMap<>();
        for (String entry : properties.getProperty("java.class.path", "").split(File.pathSeparator)) {
            if (!entry.isEmpty()) alias(byRealPath, Paths.get(entry));
        }
        for (Path directory : directories) {
            for (Path jar : jarsIn(directory)) alias(byRealPath, jar);
        }
        return new JarAliases(byRealPath, new ArrayList<>(directories));
    }

    /**
     * The user's name for the JAR at a file: code-source location, or null when it has no other name.
     * The location may itself be a link to the file the user named (a manifest Class-Path entry such as
     * Jasper's "tomcat10-jsp-api.jar", which is lib/jsp-api.jar), so it is resolved when not found as it is.
     */
    String nameOf(String location) {
        if (byRealPath.isEmpty() || !location.startsWith("file:")) return null;
        String path = location.substring("file:".length());
        while (path.startsWith("//")) path = path.substring(1);
        path = CodeSources.decode(path);
        String name = byRealPath.get(path);
        if (name != null) return name;
        try {
            return byRealPath.get(Paths.get(path).toRealPath().toString());
        } catch (IOException | RuntimeException unresolvable) {
            return null;
        }
    }

    /** The user's name for a JAR given by its real path: its alias, else its file name. */
    String nameOfRealPath(Path real) {
        String alias = byRealPath.get(real.toString());
        return alias != null ? alias : real.getFileName().toString();
    }

    /** The server lib directories whose JARs are components even before a class loads from them. */
    List<Path> libraryDirectories() {
        return libraryDirectories;
    }

    /** The JARs of a directory, sorted by name, at most MAX_JARS_PER_DIRECTORY; none when it cannot be read. */
    static List<Path> jarsIn(Path directory) {
        List<Path> jars = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                if (jars.size() >= MAX_JARS_PER_DIRECTORY) break;
                if (entry.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".jar")) jars.add(entry);
            }
        } catch (IOException | RuntimeException unreadable) {
            return List.of();
        }
        jars.sort(null);
        return jars;
    }

    private static void addDirectory(Set<Path> directories, Path directory) {
        try {
            if (Files.isDirectory(directory)) directories.add(directory.toRealPath());
        } catch (IOException | RuntimeException ignored) {
            // a lib directory that cannot be resolved has nothing to name
        }
    }

    /** A symbolic link (or a path through one) keeps its own file name; the first name of a file wins. */
    private static void alias(Map<String, String> byRealPath, Path given) {
        try {
            Path real = given.toRealPath();
            String name = given.getFileName().toString();
            if (!name.equals(real.getFileName().toString())) byRealPath.putIfAbsent(real.toString(), name);
        } catch (IOException | RuntimeException missing) {
            // a class path may name files that do not exist
        }
    }
}
