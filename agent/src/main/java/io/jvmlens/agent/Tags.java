package io.jvmlens.agent;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tags assigned at VM start (decisions §12): "k1=v1;k2=v2" (or "k1=v1+k2=v2") lists from the CRS_TAGS environment
 * variable, the system property com.azul.crs.instance.tags and the agent's tags option, later
 * sources winning on a clash. Invalid tags are skipped with a log line, since the service would
 * reject the whole vm.start batch for one bad tag.
 */
final class Tags {
    static final String ENV = "CRS_TAGS";
    static final String PROPERTY = "com.azul.crs.instance.tags";

    private Tags() {}

    /** Combines the lists in order of increasing precedence: environment, system property, agent argument. */
    static Map<String, String> combine(String environment, String property, String argument, List<String> problems) {
        Map<String, String> tags = new LinkedHashMap<>();
        parseInto(environment, ENV, tags, problems);
        parseInto(property, "-D" + PROPERTY, tags, problems);
        parseInto(argument, "the agent's tags option", tags, problems);
        return tags;
    }

    static void parseInto(String list, String origin, Map<String, String> into, List<String> problems) {
        if (list == null) return;
        // ';' or '+' between tags: neither can be part of a key or a value (no regex: the agent loads no regex classes).
        for (String entry : list.replace('+', ';').split(";")) {
            if (entry.trim().isEmpty()) continue;
            int equals = entry.indexOf('=');
            if (equals < 0) {
                problems.add("skipping tag '" + entry.trim() + "' from " + origin + ": expected key=value");
                continue;
            }
            String key = entry.substring(0, equals).trim();
            String value = entry.substring(equals + 1).trim();
            String problem = keyProblem(key);
            if (problem == null) problem = valueProblem(value);
            if (problem != null) {
                problems.add("skipping tag '" + key + "' from " + origin + ": " + problem);
                continue;
            }
            into.put(key, value);
        }
    }

    /** decisions §5: a letter, then up to 127 of [A-Za-z0-9._-]. Null when valid. */
    static String keyProblem(String key) {
        boolean valid = !key.isEmpty() && key.length() <= 128 && isLetter(key.charAt(0));
        for (int i = 1; valid && i < key.length(); i++) {
            char c = key.charAt(i);
            valid = isLetter(c) || isDigit(c) || c == '.' || c == '_' || c == '-';
        }
        return valid ? null : "a tag key starts with a letter, then up to 127 of [A-Za-z0-9._-]";
    }

    /** decisions §5: up to 256 of [A-Za-z0-9._ :/@-]. Null when valid. */
    static String valueProblem(String value) {
        boolean valid = value.length() <= 256;
        for (int i = 0; valid && i < value.length(); i++) {
            char c = value.charAt(i);
            valid = isLetter(c) || isDigit(c) || ". _:/@-".indexOf(c) >= 0;
        }
        return valid ? null : "a tag value is up to 256 of [A-Za-z0-9._ :/@-]";
    }

    private static boolean isLetter(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
