package io.jvmlens.agent;

import java.nio.charset.StandardCharsets;

/**
 * Names where a class was loaded from. A code-source location (a URL) becomes the sourceName of
 * decisions §4, the file name of the JAR; the same name goes on the JAR's components, which is how
 * the service tells a USED component from a PRESENT one.
 */
final class CodeSources {
    private CodeSources() {}

    /**
     * The sourceName for a code-source location, or null for the JDK's own modules (jrt:), which
     * are the platform rather than application code.
     * file:/opt/app/lib/log4j-core-2.19.0.jar                  → log4j-core-2.19.0.jar
     * jar:file:/opt/app.jar!/BOOT-INF/lib/spring-core-5.3.jar!/ → spring-core-5.3.jar (nested JAR)
     * jar:file:/opt/app.jar!/BOOT-INF/classes!/                 → app.jar (classes inside a JAR)
     * file:/opt/app/classes/                                    → classes (a directory: its name)
     * file:/srv/tomcat/webapps/shop/WEB-INF/classes/            → shop/WEB-INF/classes (a webapp's classes: with its context)
     */
    static String sourceName(String location) {
        if (location == null || location.startsWith("jrt:")) return null;
        String path = location.startsWith("jar:") ? location.substring(4) : location;
        // The innermost archive names the code; a directory inside an archive belongs to that archive.
        // Parts are split at "!/" by hand: String.split would compile a regex on the loading thread.
        int end = path.length();
        while (end > 0) {
            int separator = path.lastIndexOf("!/", end - 1);
            String name = lastSegment(path.substring(separator < 0 ? 0 : separator + 2, end));
            if (isArchive(name)) return decode(name);
            if (separator < 0) break;
            end = separator;
        }
        int first = path.indexOf("!/");
        String directory = first < 0 ? path : path.substring(0, first);
        String name = lastSegment(directory);
        if (name.isEmpty()) return null;
        // Every webapp has a WEB-INF/classes: without its context they would all merge as "classes".
        String webapp = webappOfClasses(directory);
        return decode(webapp != null ? webapp + "/WEB-INF/classes" : name);
    }

    /** The context directory's name when a directory is a webapp's WEB-INF/classes, else null. */
    private static String webappOfClasses(String directory) {
        int end = directory.length();
        while (end > 0 && directory.charAt(end - 1) == '/') end--;
        String suffix = "/WEB-INF/classes";
        if (!directory.startsWith(suffix, end - suffix.length())) return null;
        String webapp = lastSegment(directory.substring(0, end - suffix.length()));
        return webapp.isEmpty() ? null : webapp;
    }

    static boolean isArchive(String name) {
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        return lower.endsWith(".jar") || lower.endsWith(".war") || lower.endsWith(".ear") || lower.endsWith(".zip");
    }

    private static String lastSegment(String path) {
        int end = path.length();
        while (end > 0 && (path.charAt(end - 1) == '/' || path.charAt(end - 1) == '!')) end--;
        int start = path.lastIndexOf('/', end - 1) + 1;
        int colon = path.lastIndexOf(':', end - 1);
        if (colon >= start) start = colon + 1; // "file:x.jar" without a slash
        return path.substring(start, end);
    }

    /** Percent-decoding of a URL path segment as UTF-8 (URLDecoder would also turn '+' into a space). */
    static String decode(String segment) {
        if (segment.indexOf('%') < 0) return segment;
        StringBuilder out = new StringBuilder(segment.length());
        byte[] run = new byte[segment.length()];
        int at = 0;
        while (at < segment.length()) {
            int count = 0;
            while (isEscape(segment, at)) {
                run[count++] = (byte) (hex(segment.charAt(at + 1)) * 16 + hex(segment.charAt(at + 2)));
                at += 3;
            }
            if (count > 0) {
                out.append(new String(run, 0, count, StandardCharsets.UTF_8));
            } else {
                out.append(segment.charAt(at++));
            }
        }
        return out.toString();
    }

    private static boolean isEscape(String text, int at) {
        return at + 2 < text.length() && text.charAt(at) == '%' && hex(text.charAt(at + 1)) >= 0 && hex(text.charAt(at + 2)) >= 0;
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
}
