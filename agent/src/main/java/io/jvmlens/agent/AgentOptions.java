package io.jvmlens.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;

/**
 * The agent's settings (decisions §12). The agent argument is "key=value" options separated by
 * commas; each option may also come from a JVMLENS_AGENT_* environment variable, the argument
 * winning. Tag lists use ';' or '+' between tags (';' is the CRS_TAGS convention; '+' survives start
 * scripts that eval the JVM options, as Tomcat's does) and tag values cannot hold ',', ';' or '+', so
 * "gateway=http://h:8080,tags=team=core+env=prod" splits without ambiguity. The key is best given as
 * apiKeyFile (or JVMLENS_AGENT_API_KEY): servers log their JVM arguments, and an apiKey there is in the logs.
 * No message of the agent ever contains the key.
 * A bad value is reported and replaced by its default: a typo must never stop the application.
 */
final class AgentOptions {
    static final String DEFAULT_GATEWAY = "http://127.0.0.1:8080";

    String gateway = DEFAULT_GATEWAY;
    String apiKey;
    long flushMs = 1000;
    long heartbeatMs = 30_000;
    long stopWaitMs = 3000;
    /** How often the code reported so far is reported again, so that the service sees it still in use. */
    long codeRefreshMs = 86_400_000;
    int maxBatches = 256;
    boolean sendEnvValues;
    String tags;
    String libDirs;
    /** methods=called: a method is reported at its first call (a probe at its entry); loaded: every method of a loaded class. */
    boolean methodsCalled;

    private AgentOptions() {}

    static AgentOptions parse(String argument, Map<String, String> environment, List<String> problems) {
        AgentOptions options = new AgentOptions();
        options.set("gateway", environment.get("JVMLENS_AGENT_GATEWAY"), "JVMLENS_AGENT_GATEWAY", problems);
        options.set("apiKeyFile", environment.get("JVMLENS_AGENT_API_KEY_FILE"), "JVMLENS_AGENT_API_KEY_FILE", problems);
        options.set("apiKey", environment.get("JVMLENS_AGENT_API_KEY"), "JVMLENS_AGENT_API_KEY", problems);
        options.set("flushMs", environment.get("JVMLENS_AGENT_FLUSH_MS"), "JVMLENS_AGENT_FLUSH_MS", problems);
        options.set("heartbeatMs", environment.get("JVMLENS_AGENT_HEARTBEAT_MS"), "JVMLENS_AGENT_HEARTBEAT_MS", problems);
        options.set("stopWaitMs", environment.get("JVMLENS_AGENT_STOP_WAIT_MS"), "JVMLENS_AGENT_STOP_WAIT_MS", problems);
        options.set("codeRefreshMs", environment.get("JVMLENS_AGENT_CODE_REFRESH_MS"), "JVMLENS_AGENT_CODE_REFRESH_MS", problems);
        options.set("sendEnvValues", environment.get("JVMLENS_AGENT_SEND_ENV_VALUES"), "JVMLENS_AGENT_SEND_ENV_VALUES", problems);
        options.set("libDirs", environment.get("JVMLENS_AGENT_LIB_DIRS"), "JVMLENS_AGENT_LIB_DIRS", problems);
        options.set("methods", environment.get("JVMLENS_AGENT_METHODS"), "JVMLENS_AGENT_METHODS", problems);
        if (argument != null) {
            for (String option : argument.split(",")) {
                if (option.trim().isEmpty()) continue;
                int equals = option.indexOf('=');
                if (equals < 0) {
                    problems.add("ignoring agent option '" + option.trim() + "': expected name=value");
                    continue;
                }
                options.set(option.substring(0, equals).trim(), option.substring(equals + 1).trim(), "agent option", problems);
            }
        }
        return options;
    }

    private void set(String name, String value, String origin, List<String> problems) {
        if (value == null) return;
        switch (name) {
            case "gateway":
                String url = value;
                while (url.endsWith("/")) url = url.substring(0, url.length() - 1);
                if (url.startsWith("http://") || url.startsWith("https://")) {
                    gateway = url;
                } else {
                    problems.add("ignoring gateway '" + value + "' from " + origin + ": expected an http:// or https:// URL");
                }
                break;
            case "apiKey":
                apiKey = value.isEmpty() ? null : value;
                break;
            case "apiKeyFile":
                apiKey = keyFromFile(value, origin, problems, apiKey);
                break;
            case "flushMs":
                flushMs = number(name, value, origin, 10, 3_600_000, flushMs, problems);
                break;
            case "heartbeatMs":
                heartbeatMs = number(name, value, origin, 100, 86_400_000, heartbeatMs, problems);
                break;
            case "stopWaitMs":
                stopWaitMs = number(name, value, origin, 0, 600_000, stopWaitMs, problems);
                break;
            case "codeRefreshMs":
                codeRefreshMs = number(name, value, origin, 1000, 2_592_000_000L, codeRefreshMs, problems);
                break;
            case "maxBatches":
                maxBatches = (int) number(name, value, origin, 1, 100_000, maxBatches, problems);
                break;
            case "sendEnvValues":
                if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
                    sendEnvValues = value.equalsIgnoreCase("true");
                } else {
                    problems.add("ignoring sendEnvValues '" + value + "' from " + origin + ": expected true or false");
                }
                break;
            case "tags":
                tags = value;
                break;
            case "libDirs":
                libDirs = value.isEmpty() ? null : value;
                break;
            case "methods":
                if (value.equals("called") || value.equals("loaded")) methodsCalled = value.equals("called");
                else problems.add("ignoring methods '" + value + "' from " + origin + ": expected called or loaded");
                break;
            default:
                problems.add("ignoring unknown agent option '" + name + "' (options: gateway, apiKeyFile, apiKey, flushMs, heartbeatMs,"
                        + " stopWaitMs, codeRefreshMs, maxBatches, sendEnvValues, tags, libDirs, methods; separate tags with '+' or ';': tags=k1=v1+k2=v2)");
        }
    }

    /** The key on the first line of a file; a problem (never the file's content) when it cannot be read. */
    private static String keyFromFile(String path, String origin, List<String> problems, String fallback) {
        try {
            List<String> lines = Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8);
            String key = lines.isEmpty() ? "" : lines.get(0).trim();
            if (!key.isEmpty()) return key;
            problems.add("ignoring apiKeyFile '" + path + "' from " + origin + ": its first line is empty");
        } catch (IOException | RuntimeException e) {
            problems.add("ignoring apiKeyFile '" + path + "' from " + origin + ": cannot read it (" + e.getClass().getSimpleName() + ")");
        }
        return fallback;
    }

    private static long number(String name, String value, String origin, long min, long max, long fallback, List<String> problems) {
        try {
            long parsed = Long.parseLong(value);
            if (parsed >= min && parsed <= max) return parsed;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        problems.add("ignoring " + name + " '" + value + "' from " + origin + ": expected an integer from " + min + " to " + max);
        return fallback;
    }

    /** The events URL of decisions §4. */
    String eventsUrl() {
        return gateway + "/agent/v1/events";
    }
}
